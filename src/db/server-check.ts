// What an external PostgreSQL (DATABASE_URL) must be, checked before anything runs on it: a supported
// version, and a session of its own per connection. PgBouncer in transaction (or statement) mode
// hands each transaction to whichever server connection is free, which breaks what the queue relies
// on: LISTEN/NOTIFY and session advisory locks (migrations, backups). Session mode is fine.
import crypto from 'node:crypto';
import pg from 'pg';

/** The oldest PostgreSQL this release runs on (docs/operations.md); older ones are refused. */
export const MIN_SERVER_VERSION = 150000;
export const SUPPORTED_VERSIONS = 'PostgreSQL 15, 16, 17 and 18';

export class DatabaseRefused extends Error {
  override name = 'DatabaseRefused';
}

const client = (url: string) =>
  new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });

/**
 * Refuses a server older than MIN_SERVER_VERSION and a pooler that does not keep one session per
 * connection. The probe: connection A takes a session advisory lock; connection B tries the same
 * lock. On a server of its own (direct, or PgBouncer's session mode) B is another session and cannot
 * have it, and A releases what it holds. A transaction pooler runs B's statement on a server
 * connection A left behind (the most recently freed one), holding A's lock already, or runs A's
 * unlock where the lock is not.
 */
export async function checkDatabaseServer(
  url: string,
  opts: { minVersion?: number } = {},
): Promise<{ version: string }> {
  const a = client(url);
  const b = client(url);
  await a.connect();
  try {
    const { rows } = await a.query<{ num: string; version: string }>(
      "SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version",
    );
    const version = rows[0].version.split(' ')[0]; // "15.20 (Debian 15.20-0+deb12u1)" → "15.20"
    if (Number(rows[0].num) < (opts.minVersion ?? MIN_SERVER_VERSION)) {
      throw new DatabaseRefused(
        `DATABASE_URL: PostgreSQL ${version} is older than this release supports ` +
          `(${SUPPORTED_VERSIONS}); upgrade the server (docs/operations.md)`,
      );
    }
    await b.connect();
    const key = crypto.randomBytes(6).readUIntBE(0, 6);
    await a.query('SELECT pg_advisory_lock($1)', [key]);
    const taken = (await b.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1) AS got', [key]))
      .rows[0].got;
    if (taken) await b.query('SELECT pg_advisory_unlock($1)', [key]);
    const released = (await a.query<{ ok: boolean }>('SELECT pg_advisory_unlock($1) AS ok', [key]))
      .rows[0].ok;
    if (taken || !released) {
      throw new DatabaseRefused(
        'DATABASE_URL: the connection does not keep its own database session: a pooler ' +
          'in transaction or statement mode (PgBouncer pool_mode=transaction?) is in between. Rendergate needs ' +
          'LISTEN/NOTIFY and session advisory locks: point DATABASE_URL at the server itself or at a pool in ' +
          'session mode (pool_mode=session). See docs/operations.md "Poolers".',
      );
    }
    return { version };
  } finally {
    await a.end().catch(() => undefined);
    await b.end().catch(() => undefined);
  }
}
