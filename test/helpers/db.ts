// The databases tests run on. Every test file gets databases of its own on the test run's PostgreSQL
// (test/global-setup.ts): `freshDatabase` (migrated) or `emptyDatabase` (as an operator creates one).
// A test that stops and starts the database under a running service gets a PostgreSQL of its own:
// `privatePostgres`.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.ts';
import { createPool, type Db } from '../../src/db/pool.ts';
import { migrate } from '../../src/db/migrate.ts';
import { freePort } from './service.ts';
import { waitFor } from './wait.ts';

async function asAdmin(sql: string): Promise<void> {
  const admin = new pg.Client(inject('pgUrl'));
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * The same database over loopback TCP. An embedded PostgreSQL's URL names its Unix socket's directory
 * (src/db/embedded.ts) and its port stays open on 127.0.0.1: tools a test puts between a service and
 * the database (a TCP proxy, PgBouncer) reach it there.
 */
export function overTcp(url: string): URL {
  const u = new URL(url);
  if (/^%2F/i.test(u.hostname)) u.hostname = '127.0.0.1';
  return u;
}

/** A new, empty database (no migrations run) on the test run's PostgreSQL; `drop` removes it. */
export async function emptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  await asAdmin(`CREATE DATABASE ${name}`);
  return {
    url: inject('pgUrl').replace(/\/postgres$/, `/${name}`),
    drop: () => asAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** A new, migrated database on the test run's PostgreSQL, with a pool on it; `drop` ends both. */
export async function freshDatabase(): Promise<{ db: Db; url: string; drop: () => Promise<void> }> {
  const empty = await emptyDatabase();
  // the test's own queries and migrations, never a request's
  const db = createPool(empty.url, 20, { long: true });
  await migrate(db);
  return {
    db,
    url: empty.url,
    drop: async () => {
      await db.end();
      await empty.drop();
    },
  };
}

export interface PrivatePostgres {
  /** The URL of its `postgres` database (the same across a stop and a start). */
  readonly url: string;
  stop(): Promise<void>;
  /** Starts it again on the same data directory and port, after `stop`. */
  start(): Promise<void>;
  /** Stops it if running and removes its directory. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL of the caller's own (the embedded one, as the product runs it), in a temporary
 * directory on a fixed port, for tests that take the database away from a running service.
 */
export async function privatePostgres(): Promise<PrivatePostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-private-pg-'));
  fs.chmodSync(dir, 0o755); // the embedded PostgreSQL runs as its own user when the tests run as root
  const port = await freePort();
  const start = () => startEmbeddedPostgres(path.join(dir, 'data'), () => {}, port);
  let server: EmbeddedPostgres | null = await start();
  const url = server.url;
  return {
    url,
    stop: async () => {
      await server?.stop();
      server = null;
    },
    start: async () => {
      if (!server) server = await start();
    },
    destroy: async () => {
      await server?.stop();
      server = null;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Resolves once no render is left queued (running counts as queued) in the database, or none of
 * `accountIds` when given.
 */
export async function queueDrained(
  db: Pick<Db, 'query'>,
  o: { timeoutMs?: number; accountIds?: string[] } = {},
): Promise<void> {
  await waitFor(
    o.accountIds
      ? `every render of ${o.accountIds.join(', ')} to finish`
      : 'every render to finish',
    async () => {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM generations
          WHERE status = 'queued' AND ($1::text[] IS NULL OR account_id = ANY($1))`,
        [o.accountIds ?? null],
      );
      return rows[0].n === 0;
    },
    { timeoutMs: o.timeoutMs ?? 90_000, intervalMs: 100 },
  );
}
