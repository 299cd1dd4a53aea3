// The connection pool and the one way to run a transaction.
import pg from 'pg';

// bigint columns hold cents far below 2^53; read them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));
// dates (the days of daily caps) stay 'YYYY-MM-DD' strings, never shifted by the process's time zone.
pg.types.setTypeParser(1082, (v) => v);

/** The longest one statement may run (set on every pooled connection). */
export const STATEMENT_TIMEOUT_MS = 15_000;

export type Db = pg.Pool;
export type Tx = pg.PoolClient;
export type Queryable = pg.Pool | pg.PoolClient;

/**
 * `asyncCommit`: commits of this pool do not wait for the WAL flush. Only for writes whose loss in a
 * database crash is harmless (a worker's claim or lease renewal: a lost one is claimed again when the
 * lease lapses); never for money.
 */
export function createPool(url: string, max = 20, opts: { asyncCommit?: boolean } = {}): Db {
  // Short connect and statement limits: while the database is away a request fails fast with 503
  // instead of hanging, and a stuck statement cannot hold a connection for long.
  // Set per session with SET, not as startup parameters: PgBouncer refuses a connection whose startup
  // packet carries `statement_timeout` or `options`. The pool awaits onConnect before it hands the new
  // client out, so every statement of the client runs under these settings.
  const settings = `SET statement_timeout = ${STATEMENT_TIMEOUT_MS}${opts.asyncCommit ? '; SET synchronous_commit = off' : ''}`;
  const pool = new pg.Pool({
    connectionString: url, max, connectionTimeoutMillis: 2_000, idleTimeoutMillis: 30_000, query_timeout: 20_000,
    // typed as returning void; pg-pool awaits the promise (and ends the client when it rejects)
    onConnect: (client) => client.query(settings) as unknown as void,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => {});
  return pool;
}

/** Runs `fn` in a transaction; commits when it resolves, rolls back when it throws. */
export async function transaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const tx = await db.connect();
  let broken = false;
  try {
    await tx.query('BEGIN');
    const result = await fn(tx);
    await tx.query('COMMIT');
    return result;
  } catch (e) {
    await tx.query('ROLLBACK').catch(() => { broken = true; });
    throw e;
  } finally {
    tx.release(broken);
  }
}
