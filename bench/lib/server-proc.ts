// The benchmark's child process: the thing being measured runs here, the load generator in the parent,
// so the two never share one event loop. The same child serves the bare node:http baseline and
// Rendergate, so both get the same CPU. Driven over IPC by proc.ts: every message { seq, type, ... }
// is answered with { seq, ok, result | error }.
//
// Kinds:
//   bare       - node:http answering every request (after reading its body) with one fixed JSON body
//   rendergate - startService() in this process; optionally the shot-list renderer is replaced by an
//                instant backend that records when each render starts (the dispatch benchmark)
//   pgcommit   - the commit-rate ceiling: N connections doing single-row INSERTs, each its own
//                durable (fsynced) transaction, straight through pg
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import pino from 'pino';
import { loadConfig, type Role } from '../../src/config.ts';
import { startService, type Running } from '../../src/app.ts';
import type { ModelBackend } from '../../src/backends/types.ts';
import { wallNow } from './clock.ts';
import { percentile } from './stats.ts';

export type ChildRequest =
  | { type: 'bare'; body: string }
  | { type: 'rendergate'; env: Record<string, string>; role: Role; instantShotList: boolean }
  | { type: 'pgcommit'; url: string; connections: number; durationMs: number; payload: string }
  | { type: 'starts' }
  | { type: 'rss' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'stop' };

let server: http.Server | null = null;
let running: Running | null = null;
let session: Session | null = null;
const pgClients: pg.Client[] = [];
/** [generation id, wall-clock ms] of every render the instant backend started. */
const starts: Array<[string, number]> = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

// Returns at once: the dispatch benchmark measures the path to the renderer, not a render. The worker
// names the render's scratch directory after the generation (rendergate-<id>-XXXX), which is how the
// start is matched to its create.
const instant: ModelBackend = {
  run: async (_inputs, ctx) => {
    const at = wallNow();
    const m = /(gen_[0-9a-f]{32})/.exec(path.basename(ctx.workDir));
    starts.push([m ? m[1] : '?', at]);
    return { kind: 'text', text: 'ok' };
  },
};

async function handle(msg: ChildRequest): Promise<unknown> {
  switch (msg.type) {
    case 'bare': {
      const body = Buffer.from(msg.body);
      server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
          res.end(body);
        });
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return { port: (server.address() as net.AddressInfo).port };
    }
    case 'rendergate': {
      // What-if experiments: a module imported before the service starts can stub one component
      // (say, the rate limiter) to show what the rest does without it. Never set in normal runs.
      if (process.env.RENDERGATE_BENCH_PRELOAD) await import(pathToFileURL(path.resolve(process.env.RENDERGATE_BENCH_PRELOAD)).href);
      const port = await freePort();
      const config = loadConfig({
        PORT: String(port), HOST: '127.0.0.1', RENDERGATE_PUBLIC_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'silent', RENDERGATE_RATE_LIMIT_PER_MINUTE: '1000000', ...msg.env,
      });
      running = await startService(config, msg.role, {
        log: pino({ level: 'silent' }),
        extraBackends: msg.instantShotList ? { 'shot-list': instant } : undefined,
      });
      return { port };
    }
    case 'pgcommit': {
      // Connections stay open between runs (like a pool), so their backends' CPU is counted by cpu.ts.
      while (pgClients.length < msg.connections) {
        const c = new pg.Client({ connectionString: msg.url });
        await c.connect();
        pgClients.push(c);
      }
      const latencies: number[] = [];
      const t0 = performance.now();
      const until = t0 + msg.durationMs;
      await Promise.all(pgClients.slice(0, msg.connections).map(async (c) => {
        while (performance.now() < until) {
          const t = performance.now();
          await c.query('INSERT INTO bench_commit (payload) VALUES ($1)', [msg.payload]);
          latencies.push(performance.now() - t);
        }
      }));
      const seconds = (performance.now() - t0) / 1000;
      return { rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), count: latencies.length };
    }
    case 'starts':
      return starts.splice(0);
    case 'rss':
      return process.memoryUsage().rss;
    case 'profile-start':
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      return null;
    case 'profile-stop': {
      if (!session) return null;
      const { profile } = await session.post('Profiler.stop');
      fs.writeFileSync(msg.file, JSON.stringify(profile));
      session.disconnect();
      session = null;
      return msg.file;
    }
    case 'stop':
      await Promise.all(pgClients.map((c) => c.end().catch(() => undefined)));
      if (running) await running.close(2_000);
      if (server) { server.closeAllConnections(); await new Promise((r) => server!.close(r)); }
      return null;
  }
}

process.on('message', (raw) => {
  const { seq, ...msg } = raw as ChildRequest & { seq: number };
  handle(msg as ChildRequest).then(
    (result) => process.send!({ seq, ok: true, result }, () => { if (msg.type === 'stop') process.exit(0); }),
    (e: Error) => process.send!({ seq, ok: false, error: e.stack ?? String(e) }),
  );
});
// The parent is gone (killed, crashed): so is the benchmark; don't linger holding ports and connections.
process.on('disconnect', () => process.exit(0));
process.send!({ seq: 0, ok: true, result: 'hello' });
