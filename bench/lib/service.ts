// Starts Rendergate in a child process on a benchmark database, and the few API calls scenarios need.
import fs from 'node:fs';
import path from 'node:path';
import type { Role } from '../../src/config.ts';
import type { BenchContext } from './context.ts';
import { Child } from './proc.ts';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

export interface Service {
  child: Child;
  base: string;
  stop: () => Promise<void>;
}

let services = 0;

export async function startRendergate(
  ctx: BenchContext,
  databaseUrl: string,
  opts: {
    role: Role;
    env?: Record<string, string>;
    instantShotList?: boolean;
  },
): Promise<Service> {
  const dataDir = path.join(ctx.tmp, `svc-${++services}`);
  fs.mkdirSync(dataDir, { recursive: true });
  const child = await Child.start();
  try {
    const { port } = await child.call<{ port: number }>({
      type: 'rendergate',
      role: opts.role,
      instantShotList: opts.instantShotList ?? false,
      logFile: path.join(dataDir, 'rendergate.log'),
      env: {
        DATABASE_URL: databaseUrl,
        RENDERGATE_DATA_DIR: dataDir,
        RENDERGATE_ADMIN_TOKEN: ADMIN_TOKEN,
        ...opts.env,
      },
    });
    return { child, base: `http://127.0.0.1:${port}`, stop: () => child.stop() };
  } catch (e) {
    await child.stop();
    throw e;
  }
}

/**
 * The fields of the API's answers the benchmark reads. One type for every answer: each caller checks
 * the status before it reads a field, so an error body (or none) never reaches those reads.
 */
export interface Answer {
  id: string;
  key: string;
  accountId: string;
  status: string;
  error?: { code: string; message: string };
  modelId: string;
  inputs: Record<string, unknown>;
  costCents: number;
  email: string;
  completedAt: string | null;
  /** an OpenAI chat completion's (/openai/v1) */
  choices: { message: { content: string } }[];
  /** an OpenAI response's (/openai/v1/responses) */
  output_text: string;
}

export interface Reply {
  status: number;
  json: Answer;
  text: string;
}

export async function call(
  base: string,
  method: string,
  p: string,
  o: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + p, {
    method,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json: json as Answer, text };
}

export async function admin(
  base: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<Answer> {
  const r = await call(base, method, '/admin/v1' + p, { key: ADMIN_TOKEN, body });
  if (r.status >= 300) throw new Error(`admin ${method} ${p} -> ${r.status} ${r.text}`);
  return r.json;
}

let accounts = 0;

/** An account with a balance and one key whose rate limit the benchmark cannot reach. */
export async function makeAccount(
  base: string,
  credits = 1_000_000_000_000,
  // the admin API sets any rate; a quiet machine passes a million a minute
  rateLimitPerMinute = 1_000_000_000,
): Promise<{ accountId: string; key: string; keyId: string }> {
  const a = await admin(base, 'POST', '/accounts', {
    email: `bench-${process.pid}-${++accounts}@bench.test`,
    name: `Bench ${accounts}`,
  });
  await admin(base, 'POST', `/accounts/${a.id}/credits`, {
    amountCents: credits,
    reason: 'benchmark',
  });
  const k = await admin(base, 'POST', `/accounts/${a.id}/keys`, {
    name: 'bench',
    rateLimitPerMinute,
  });
  return { accountId: a.id, key: k.key, keyId: k.id };
}

/** Distinct Idempotency-Key values for the whole run. */
let idem = 0;
const idemPrefix = `bench-${Date.now().toString(36)}`;
export const nextIdempotencyKey = () => `${idemPrefix}-${++idem}`;

/** A realistic create body: model B at its defaults, an image on a CDN (never fetched: role api). */
export const IMAGE_TO_VIDEO = {
  modelId: 'rendergate/image-to-video',
  inputs: {
    prompt: 'A slow push in on a lighthouse at dusk, waves breaking below',
    image: 'https://cdn.example.com/u/42/lighthouse.jpg',
  },
};
