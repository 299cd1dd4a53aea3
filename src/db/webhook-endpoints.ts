// The statements on `webhook_endpoints` (migrations/009; `mode`, migrations/025).
import type { Queryable, Tx } from './pool.ts';

export type EndpointMode = 'live' | 'test';

/**
 * The endpoints a reader may see: those of one mode (an API key sees its own mode's only), or both
 * (the studio, which shows every endpoint of the account, each marked).
 */
export type EndpointModes = EndpointMode | 'both';

export interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  secret: string;
  enabled: boolean;
  mode: EndpointMode;
  created_at: Date;
}

/** `$n` matches every mode when the parameter is 'both'. */
const modeIs = (n: number) => `($${n}::text = 'both' OR mode = $${n})`;

/**
 * Inserts an endpoint unless the account already has `max` of its mode (counted under a lock of the
 * account's own, so that concurrent creates count one at a time); null when it has.
 */
export async function insertEndpointBelow(
  tx: Tx,
  max: number,
  e: {
    id: string;
    accountId: string;
    url: string;
    events: string[];
    secret: string;
    mode: EndpointMode;
  },
): Promise<EndpointRow | null> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `webhooks:${e.accountId}`,
  ]);
  const { rows: n } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_endpoints
     WHERE account_id = $1 AND deleted_at IS NULL AND mode = $2`,
    [e.accountId, e.mode],
  );
  if (n[0].n >= max) return null;
  const { rows } = await tx.query(
    `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, mode)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [e.id, e.accountId, e.url, e.events, e.secret, e.mode],
  );
  return rows[0] as EndpointRow;
}

export async function liveEndpoint(
  q: Queryable,
  accountId: string,
  id: string,
  modes: EndpointModes,
): Promise<EndpointRow | null> {
  const { rows } = await q.query(
    `SELECT * FROM webhook_endpoints
     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND ${modeIs(3)}`,
    [id, accountId, modes],
  );
  return (rows[0] as EndpointRow | undefined) ?? null;
}

export async function liveEndpoints(
  q: Queryable,
  accountId: string,
  modes: EndpointModes,
  after: string | null,
  limit: number,
): Promise<EndpointRow[]> {
  const { rows } = await q.query(
    `SELECT * FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL AND ${modeIs(2)}
       AND ($3::text IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [accountId, modes, after, limit],
  );
  return rows as EndpointRow[];
}

/**
 * Deletes (and disables) an endpoint of the account and of `modes`; false when it has no such live
 * endpoint.
 */
export async function markEndpointDeleted(
  q: Queryable,
  accountId: string,
  id: string,
  modes: EndpointModes,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE webhook_endpoints SET deleted_at = now(), enabled = false
     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND ${modeIs(3)}`,
    [id, accountId, modes],
  );
  return rowCount !== 0;
}

/** The receiver answered 410: the endpoint gets nothing more. */
export async function disableEndpoint(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE webhook_endpoints SET enabled = false WHERE id = $1', [id]);
}
