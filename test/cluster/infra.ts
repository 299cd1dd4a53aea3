// What a cluster test runs besides PostgreSQL (started by the test with startEmbeddedPostgres: the
// postmaster is its own process, reached by every Rendergate process only through DATABASE_URL): an
// S3-compatible server (s3rver) on a loopback port, a catalog file with per-model limits, and the
// Rendergate processes themselves, each `node src/main.ts` with RENDERGATE_ROLE=api|worker.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { parseDocument } from 'yaml';
import { DEFAULT_CATALOG_PATH } from '../../src/domain/catalog-load.ts';
import { freePort } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface S3Server {
  env: Record<string, string>;
  client: S3Client;
  count: (prefix: string) => Promise<number>;
  close: () => Promise<void>;
}

export async function startS3(dir: string, bucket: string): Promise<S3Server> {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
  const { port } = await server.run();
  const env = {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
  };
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: env.AWS_ENDPOINT_URL,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const count = async (prefix: string) => {
    let n = 0;
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      n += page.KeyCount ?? 0;
      token = page.NextContinuationToken;
    } while (token);
    return n;
  };
  return {
    env,
    client,
    count,
    close: async () => {
      client.destroy();
      await server.close();
    },
  };
}

/** The built-in catalog with `concurrency` set on some models, and `extra` models added, written to `file`. */
export function writeCatalog(
  file: string,
  concurrency: Record<string, number>,
  extra: Record<string, unknown>[] = [],
): string {
  const doc = parseDocument(fs.readFileSync(DEFAULT_CATALOG_PATH, 'utf8'));
  const models = [...doc.toJS().models, ...extra] as Array<Record<string, unknown>>;
  // Examples name files beside the catalog file, which this copy (written to `file`) has not.
  for (const m of models) delete m.examples;
  for (const m of models)
    if (concurrency[m.id as string]) m.concurrency = concurrency[m.id as string];
  for (const id of Object.keys(concurrency))
    if (!models.some((m) => m.id === id)) throw new Error(`no model ${id} in the catalog`);
  doc.set('models', models);
  fs.writeFileSync(file, doc.toString());
  // The default models' examples name files beside the catalog file.
  const examples = path.join(path.dirname(file), 'examples');
  if (!fs.existsSync(examples))
    fs.symlinkSync(path.join(path.dirname(DEFAULT_CATALOG_PATH), 'examples'), examples);
  return file;
}

export interface Proc {
  role: 'api' | 'worker';
  pid: number;
  base: string;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
  alive: () => boolean;
  kill: (signal: NodeJS.Signals) => Promise<number | null>;
}

/**
 * Starts `rendergate` with RENDERGATE_ROLE=role, as an operator's supervisor would, and waits until it
 * answers /healthz (a worker serves only /healthz, /readyz and /metrics) and, for a worker, has logged
 * (at LOG_LEVEL=info) that it claims renders.
 */
export async function startProcess(
  role: 'api' | 'worker',
  env: Record<string, string>,
  opts: { port?: number; nice?: number } = {},
): Promise<Proc> {
  const p = opts.port ?? (await freePort());
  let out = '';
  // `nice` execs node, so the pid stays the service's own (workers name themselves by it in leases).
  const argv = [process.execPath, '--import', 'tsx', 'src/main.ts'];
  const proc = spawn(
    opts.nice ? 'nice' : argv[0],
    opts.nice ? ['-n', String(opts.nice), ...argv] : argv.slice(1),
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...env,
        RENDERGATE_ROLE: role,
        HOST: '127.0.0.1',
        PORT: String(p),
        RENDERGATE_PUBLIC_URL: `http://127.0.0.1:${p}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  proc.stdout.on('data', (d) => {
    out += d;
  });
  proc.stderr.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${p}`;
  const ready = waitFor(
    `${role} to get ready`,
    async () =>
      (role === 'api' || out.includes('rendergate is running')) &&
      (await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )),
    { intervalMs: 100 },
  );
  const died = exited.then(() => {
    throw new Error(`${role} exited at start: ${out}`);
  });
  try {
    await Promise.race([ready, died]);
  } catch (e) {
    proc.kill('SIGKILL');
    throw new Error(`${role} did not get ready: ${out}`, { cause: e });
  }
  died.catch(() => {
    /* an exit after the start is the test's to see, through `exited` */
  });
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  return {
    role,
    pid: proc.pid!,
    base,
    port: p,
    output: () => out,
    exited,
    alive,
    kill: async (signal) => {
      if (alive()) proc.kill(signal);
      return exited;
    },
  };
}
