// Starts the real service in this process on a fresh database, with helpers to call it over HTTP.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startService, type Running } from '../../src/app.ts';
import type { ModelBackend } from '../../src/backends/types.ts';
import type { Role } from '../../src/config.ts';
import { checkerFor } from './openapi-check.ts';
import { waitFor } from './wait.ts';

export const ADMIN = 'test-admin-token-0123456789abcdef';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface TestService {
  base: string;
  running: Running;
  dataDir: string;
  stop: () => Promise<void>;
}

export async function startTestService(
  databaseUrl: string,
  opts: {
    role?: Role;
    env?: Record<string, string>;
    extraBackends?: Record<string, ModelBackend>;
    dataDir?: string;
    logger?: pino.Logger;
    beforeTestRender?: (id: string) => Promise<void>;
  } = {},
): Promise<TestService> {
  const port = await freePort();
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rg-svc-'));
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    RENDERGATE_DATA_DIR: dataDir,
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    RENDERGATE_ALLOW_PRIVATE_URLS: '1',
    RENDERGATE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    // Studio tests sign many accounts up from 127.0.0.1; the per-address limit has its own test.
    LOG_LEVEL: 'silent',
    RENDERGATE_SIGNUPS_PER_HOUR: '100000',
    ...opts.env,
  });
  const running = await startService(config, opts.role ?? 'serve', {
    extraBackends: opts.extraBackends,
    log: opts.logger ?? pino({ level: 'silent' }),
    beforeTestRender: opts.beforeTestRender,
  });
  return {
    base: `http://127.0.0.1:${port}`,
    running,
    dataDir,
    stop: async () => {
      await running.close(5_000);
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

export function client(base: string) {
  const call = async (
    method: string,
    p: string,
    o: {
      key?: string;
      body?: unknown;
      headers?: Record<string, string>;
      skipDocumentCheck?: boolean;
    } = {},
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    }
    const res = await fetch(base + p, { method, headers, body });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    // Every /v1 answer is checked against the document the service publishes: drift fails the test.
    if (p.startsWith('/v1/') && !o.skipDocumentCheck) {
      const problems = (await checkerFor(base)).check(method, p, res.status, res.headers, text);
      if (problems.length > 0)
        throw new Error(`answer differs from /v1/openapi.json:\n  ${problems.join('\n  ')}`);
    }
    return { status: res.status, headers: res.headers, json, text };
  };
  const admin = async (method: string, p: string, body?: unknown) => {
    const r = await call(method, '/admin/v1' + p, { key: ADMIN, body });
    if (r.status >= 300) throw new Error(`admin ${method} ${p} -> ${r.status} ${r.text}`);
    return r.json;
  };
  const account = async (cents: number, keyOpts: Record<string, unknown> = {}) => {
    const a = await admin('POST', '/accounts', {
      email: `t-${Math.random().toString(36).slice(2)}@example.test`,
    });
    if (cents > 0) await admin('POST', `/accounts/${a.id}/credits`, { amountCents: cents });
    const k = await admin('POST', `/accounts/${a.id}/keys`, keyOpts);
    return { accountId: a.id as string, key: k.key as string, keyId: k.id as string };
  };
  /** Polls a generation until it leaves `queued`; null once it is gone (deleted). */
  const waitFinal = async (key: string, id: string, ms = 60_000): Promise<any> => {
    const final = await waitFor(
      `generation ${id} to leave queued`,
      async () => {
        const r = await call('GET', `/v1/generations/${id}`, { key });
        if (r.status === 404) return { gone: true as const };
        // a 503 (the database or this process's event loop briefly stalled) or 429 is asked again
        if (r.status === 503 || r.status === 429) return false;
        if (r.status !== 200) throw new Error(`poll of ${id} answered ${r.status}: ${r.text}`);
        return r.json.status !== 'queued' && { json: r.json };
      },
      { timeoutMs: ms, intervalMs: 100 },
    );
    return 'gone' in final ? null : final.json;
  };
  return { call, admin, account, waitFinal };
}
