// Throughput of creates and polls with 1 and with 2 API processes on one PostgreSQL (not part of
// `npm test`; run with `node --import tsx test/cluster/throughput.ts [seconds]`).
//
// poll   = GET /v1/generations/{id}, rotating over 16 accounts and 200 generations;
// create = POST /v1/generations (text model) with a distinct Idempotency-Key each, rotating over the
//          16 accounts (one account alone serialises its creates on its balance row).
// With 2 APIs, two autocannon runs go at once, half the connections each. No worker runs, so nothing
// else takes CPU. The load generator shares the machine with the APIs and PostgreSQL: on 2 cores a
// second API process mostly competes with the first for the same CPU, so read these as a measure of
// overhead, not of what a second machine would add.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { ADMIN } from '../helpers/service.ts';
import { startProcess, type Proc } from './infra.ts';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = 32;
const TEXT = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A cyclist crosses a quiet street at dawn. Pigeons rise from a roof.' },
};

async function json(
  base: string,
  method: string,
  p: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${p} -> ${res.status} ${await res.text()}`);
  return res.json();
}

interface Shot {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

function cannon(
  base: string,
  connections: number,
  next: () => {
    method: 'GET' | 'POST';
    path: string;
    headers: Record<string, string>;
    body?: string;
  },
): Promise<Shot> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: base,
        connections,
        duration: SECONDS,
        timeout: 30,
        requests: [{ setupRequest: (req) => ({ ...req, ...next() }) }],
      },
      (err, r) => {
        if (err) {
          reject(err);
          return;
        }
        const s = r as unknown as {
          requests: { total: number };
          latency: { p50: number; p99: number };
          non2xx: number;
          errors: number;
          timeouts: number;
          duration: number;
          '2xx': number;
        };
        resolve({
          rps: s['2xx'] / s.duration,
          p50: s.latency.p50,
          p99: s.latency.p99,
          non2xx: s.non2xx,
          errors: s.errors + s.timeouts,
        });
      },
    );
  });
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-throughput-'));
  fs.chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres(path.join(dir, 'pg'));
  const env = {
    DATABASE_URL: pg.url,
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    RENDERGATE_DATA_DIR: path.join(dir, 'data'),
    LOG_LEVEL: 'error',
  };
  const apis: Proc[] = await Promise.all([startProcess('api', env), startProcess('api', env)]);
  try {
    const base = apis[0].base;
    const accounts: Array<{ key: string; ids: string[] }> = [];
    for (let i = 0; i < 16; i++) {
      const a = await json(base, 'POST', '/admin/v1/accounts', ADMIN, {
        email: `t${i}@example.test`,
      });
      await json(base, 'POST', `/admin/v1/accounts/${a.id}/credits`, ADMIN, {
        amountCents: 100_000_000,
      });
      const k = await json(base, 'POST', `/admin/v1/accounts/${a.id}/keys`, ADMIN, {
        rateLimitPerMinute: 1_000_000,
      });
      accounts.push({ key: k.key, ids: [] });
    }
    for (let i = 0; i < 200; i++) {
      const a = accounts[i % accounts.length];
      a.ids.push(
        (
          await json(base, 'POST', '/v1/generations', a.key, TEXT, {
            'idempotency-key': crypto.randomUUID(),
          })
        ).id,
      );
    }
    let turn = 0;
    const poll = () => {
      const a = accounts[turn++ % accounts.length];
      return {
        method: 'GET' as const,
        path: `/v1/generations/${a.ids[turn % a.ids.length]}`,
        headers: { authorization: `Bearer ${a.key}` },
      };
    };
    const create = () => {
      const a = accounts[turn++ % accounts.length];
      return {
        method: 'POST' as const,
        path: '/v1/generations',
        body: JSON.stringify(TEXT),
        headers: {
          authorization: `Bearer ${a.key}`,
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
      };
    };
    const rows: string[] = [];
    const run = async (name: string, n: 1 | 2, next: typeof poll | typeof create) => {
      const shots = await Promise.all(
        apis.slice(0, n).map((a) => cannon(a.base, CONNECTIONS / n, next)),
      );
      const rps = shots.reduce((s, x) => s + x.rps, 0);
      const line = `${name.padEnd(6)} ${n} API  ${rps.toFixed(0).padStart(6)} req/s  p50 ${shots.map((s) => s.p50).join('/')} ms  p99 ${shots.map((s) => s.p99).join('/')} ms  non-2xx ${shots.reduce((s, x) => s + x.non2xx, 0)}  errors ${shots.reduce((s, x) => s + x.errors, 0)}`;
      process.stderr.write(line + '\n');
      rows.push(line);
    };
    await cannon(apis[0].base, 8, poll); // warm-up: JIT, pools, caches
    for (const round of [1, 2]) {
      process.stderr.write(`round ${round}\n`);
      await run('poll', 1, poll);
      await run('poll', 2, poll);
      await run('create', 1, create);
      await run('create', 2, create);
    }
    const rss = apis.map((a) => {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${a.pid}/status`, 'utf8'));
      return m ? `${Math.round(Number(m[1]) / 1024)} MB` : '?';
    });
    process.stdout.write(
      `${os.cpus().length} CPUs, load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}, API RSS ${rss.join(' / ')}\n${rows.join('\n')}\n`,
    );
  } finally {
    await Promise.all(apis.map((a) => a.kill('SIGTERM')));
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
