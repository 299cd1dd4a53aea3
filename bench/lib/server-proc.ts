// The benchmark's child process: the thing being measured runs here, the load generator in the parent,
// so the two never share one event loop. The same child serves the bare node:http baseline and
// Rendergate, so both get the same CPU. Driven over IPC by proc.ts: every message { seq, type, ... }
// is answered with { seq, ok, result | error }.
//
// Kinds:
//   bare       - node:http answering every request (after reading its body) with one fixed JSON body
//   fastify    - the framework floor: a Fastify app with no hooks, logger or plugins whose one GET and
//                one POST route (its JSON body parsed) answer the same fixed body
//   pgcreate   - the database side of a create alone: N connections calling rendergate_create_generations
//                with one create each (what the API sends when creates do not overlap), no HTTP
//   rendergate - startService() in this process; optionally the shot-list renderer is replaced by an
//                instant backend that records when each render starts (the dispatch benchmark). It logs
//                at LOG_LEVEL (the default `info` unless the scenario says otherwise) to a file, through
//                the same asynchronous destination as `rendergate serve`, so runs pay what operators pay
//   pgcommit   - the commit-rate ceiling: N connections doing single-row INSERTs, each its own
//                durable (fsynced) transaction, straight through pg
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { loadConfig, type Role } from '../../src/config.ts';
import { startService, type Running } from '../../src/app.ts';
import { createProcessLog } from '../../src/cli/logger.ts';
import type { ModelBackend } from '../../src/backends/types.ts';
import { wallNow } from './clock.ts';
import { percentile } from './stats.ts';

export type ChildRequest =
  | { type: 'bare'; body: string }
  | { type: 'fastify'; body: string }
  | {
      type: 'pgcreate';
      url: string;
      connections: number;
      durationMs: number;
      accounts: Array<{ accountId: string; keyId: string }>;
      modelId: string;
      inputs: unknown;
      cost: number;
    }
  | {
      type: 'rendergate';
      env: Record<string, string>;
      role: Role;
      instantShotList: boolean;
      logFile: string;
    }
  | { type: 'pgcommit'; url: string; connections: number; durationMs: number; payload: string }
  | { type: 'starts' }
  | { type: 'rss' }
  | { type: 'eld-start' }
  | { type: 'eld-stop' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'log-level'; level: string }
  | { type: 'stop' };

let server: http.Server | null = null;
let fastify: FastifyInstance | null = null;
let running: Running | null = null;
let session: Session | null = null;
let eld: IntervalHistogram | null = null;
/** The service's process log (null at LOG_LEVEL=silent), whose level 'log-level' changes. */
let processLog: ReturnType<typeof createProcessLog> | null = null;
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
  run: (_inputs, ctx) => {
    const at = wallNow();
    const m = /(gen_[0-9a-f]{32})/.exec(path.basename(ctx.workDir));
    starts.push([m ? m[1] : '?', at]);
    return Promise.resolve({ kind: 'text', text: 'ok' });
  },
};

async function handle(msg: ChildRequest): Promise<unknown> {
  switch (msg.type) {
    case 'bare': {
      const body = Buffer.from(msg.body);
      server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': body.length,
          });
          res.end(body);
        });
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return { port: (server.address() as net.AddressInfo).port };
    }
    case 'fastify': {
      const app = Fastify({ logger: false });
      app.get('/*', async (_req, reply) =>
        reply.type('application/json; charset=utf-8').send(msg.body),
      );
      app.post('/*', async (req, reply) => {
        if (typeof req.body !== 'object') throw new Error('no JSON body');
        return reply.type('application/json; charset=utf-8').send(msg.body);
      });
      const port = await freePort();
      await app.listen({ port, host: '127.0.0.1' });
      fastify = app;
      return { port };
    }
    case 'pgcreate': {
      const clients = await Promise.all(
        Array.from({ length: msg.connections }, async () => {
          const c = new pg.Client({ connectionString: msg.url });
          await c.connect();
          return c;
        }),
      );
      const latencies: number[] = [];
      const t0 = performance.now();
      const until = t0 + msg.durationMs;
      let turn = 0;
      await Promise.all(
        clients.map(async (c) => {
          while (performance.now() < until) {
            const a = msg.accounts[turn++ % msg.accounts.length];
            const item = {
              i: 0,
              id: `gen_${crypto.randomBytes(16).toString('hex')}`,
              ledger_id: `led_${crypto.randomBytes(16).toString('hex')}`,
              account_id: a.accountId,
              key_id: a.keyId,
              idem: crypto.randomUUID(),
              hash: crypto.randomBytes(32).toString('hex'),
              model_id: msg.modelId,
              inputs: msg.inputs,
              cost: msg.cost,
              deadline_s: 3600,
              cap: null,
            };
            const t = performance.now();
            const { rows } = await c.query<{ outcome: string }>({
              name: 'pgcreate',
              text: 'SELECT outcome FROM rendergate_create_generations($1, $2)',
              values: [JSON.stringify([item]), 'UTC'],
            });
            if (rows[0].outcome !== 'created') throw new Error(`pgcreate: ${rows[0].outcome}`);
            latencies.push(performance.now() - t);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      await Promise.all(clients.map((c) => c.end()));
      return {
        rps: latencies.length / seconds,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        count: latencies.length,
      };
    }
    case 'rendergate': {
      // What-if experiments: a module imported before the service starts can stub one component
      // (say, the rate limiter) to show what the rest does without it. Never set in normal runs.
      if (process.env.RENDERGATE_BENCH_PRELOAD)
        await import(pathToFileURL(path.resolve(process.env.RENDERGATE_BENCH_PRELOAD)).href);
      const port = await freePort();
      const config = loadConfig({
        PORT: String(port),
        HOST: '127.0.0.1',
        RENDERGATE_PUBLIC_URL: `http://127.0.0.1:${port}`,
        RENDERGATE_RATE_LIMIT_PER_MINUTE: '1000000',
        ...msg.env,
      });
      // As `rendergate serve` logs: access lines straight to the process log's destination.
      const logging =
        config.logLevel === 'silent'
          ? null
          : createProcessLog(config.logLevel, { fd: fs.openSync(msg.logFile, 'a'), pretty: false });
      processLog = logging;
      running = await startService(config, msg.role, {
        log: logging?.log ?? pino({ level: 'silent' }),
        access: logging?.access ?? null,
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
      await Promise.all(
        pgClients.slice(0, msg.connections).map(async (c) => {
          while (performance.now() < until) {
            const t = performance.now();
            await c.query('INSERT INTO bench_commit (payload) VALUES ($1)', [msg.payload]);
            latencies.push(performance.now() - t);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      return {
        rps: latencies.length / seconds,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        count: latencies.length,
      };
    }
    case 'starts':
      return starts.splice(0);
    case 'rss':
      return process.memoryUsage().rss;
    // The event loop's delay (how late a 2 ms timer fires) over a window, in ms: a stall in this
    // process shows here whatever request or task caused it.
    case 'eld-start':
      eld?.disable();
      eld = monitorEventLoopDelay({ resolution: 2 });
      eld.enable();
      return null;
    case 'eld-stop': {
      if (!eld) return null;
      eld.disable();
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      const h = eld;
      eld = null;
      return {
        p50: ms(h.percentile(50)),
        p99: ms(h.percentile(99)),
        max: ms(h.max),
        samples: h.count,
      };
    }
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
    // The level of the service's log, changed while it runs (bench/lib/log-levels.ts).
    case 'log-level':
      if (!processLog) throw new Error('log-level: the service was started at LOG_LEVEL=silent');
      processLog.log.level = msg.level;
      return null;
    case 'stop':
      await Promise.all(pgClients.map((c) => c.end().catch(() => undefined)));
      if (running) await running.close(2_000);
      if (server) {
        server.closeAllConnections();
        await new Promise((r) => server!.close(r));
      }
      if (fastify) await fastify.close();
      return null;
  }
}

process.on('message', (raw) => {
  const { seq, ...msg } = raw as ChildRequest & { seq: number };
  handle(msg).then(
    (result) =>
      process.send!({ seq, ok: true, result }, () => {
        if (msg.type === 'stop') process.exit(0);
      }),
    (e: Error) => process.send!({ seq, ok: false, error: e.stack ?? String(e) }),
  );
});
// The parent is gone (killed, crashed): so is the benchmark; don't linger holding ports and connections.
process.on('disconnect', () => process.exit(0));
process.send!({ seq: 0, ok: true, result: 'hello' });
