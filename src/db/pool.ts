// The connection pool and the one way to run a transaction.
import pg from 'pg';

// bigint columns hold cents far below 2^53; read them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));
// dates (the days of daily caps) stay 'YYYY-MM-DD' strings, never shifted by the process's time zone.
pg.types.setTypeParser(1082, (v) => v);

export type Db = pg.Pool;
export type Tx = pg.PoolClient;
export type Queryable = pg.Pool | pg.PoolClient;

/** How long a request may wait for the database (docs/api.md "Abuse limits", "Faults"). */
export const DB_WAIT = { connectMs: 1_500, queryMs: 2_200 } as const;

/**
 * `asyncCommit`: commits of this pool do not wait for the WAL flush. Only for writes whose loss in a
 * database crash is harmless (a worker's claim or lease renewal: a lost one is claimed again when the
 * lease lapses); never for money. `genericPlans`: its prepared statements are planned once per
 * connection, not at every execution; only for a pool whose few statements have plans that do not
 * depend on their values (tested so, as test/integration/webhooks/claim-cost.test.ts does for the
 * webhook claim). `long`: for migrations and operator commands, whose statements may legitimately run
 * for minutes; every other pool serves requests and work that must fail fast.
 */
export function createPool(
  url: string,
  max = 20,
  opts: { asyncCommit?: boolean; genericPlans?: boolean; long?: boolean } = {},
): Db {
  // Short limits: with the database away or frozen, a request waits at most 1.5 s for a connection
  // (a new one's handshake, or a free one of the pool) and 2.2 s for any one statement's answer, so
  // its 503 comes within 3 s, the first one included (an idle connection to a frozen server would
  // otherwise wait for TCP). A query that times out takes its connection with it (pg-pool destroys a
  // client released with an error), so a frozen connection is never handed out again.
  // The server-side settings are SET per session, not sent as startup parameters: PgBouncer refuses a
  // connection whose startup packet carries `statement_timeout` or `options`. The pool awaits
  // onConnect before it hands the new client out, so every statement runs under these settings.
  const statementMs = opts.long ? 0 : DB_WAIT.queryMs;
  const settings = [
    `SET statement_timeout = ${statementMs}`,
    ...(opts.asyncCommit ? ['SET synchronous_commit = off'] : []),
    ...(opts.genericPlans ? ['SET plan_cache_mode = force_generic_plan'] : []),
  ].join('; ');
  const timeouts = opts.long
    ? { connectionTimeoutMillis: 10_000, query_timeout: 0 }
    : { connectionTimeoutMillis: DB_WAIT.connectMs, query_timeout: DB_WAIT.queryMs };
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    ...timeouts,
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
    await tx.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw e;
  } finally {
    tx.release(broken);
  }
}
