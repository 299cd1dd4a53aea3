// The statements on `api_keys`.
import type { Queryable } from './pool.ts';

export interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  start: string;
  created_at: Date;
  daily_cap_cents: number | null;
  rate_limit_per_minute: number;
  revoked_at: Date | null;
  mode: 'live' | 'test';
}

/** A key found by its hash, with what its account's live keys share (keyByHash). */
export interface KeyLookupRow extends KeyRow {
  live_keys: number;
  max_rate_limit_per_minute: number | null;
}

export interface NewKeyRow {
  id: string;
  accountId: string;
  name: string;
  hash: Buffer;
  start: string;
  dailyCapCents: number | null;
  rateLimitPerMinute: number;
  mode: 'live' | 'test';
  /** The person who made it (null: the operator). */
  createdBy?: string | null;
}

/** Inserts the key if its account exists; null when it does not. */
export async function insertKey(q: Queryable, k: NewKeyRow): Promise<KeyRow | null> {
  const { rows } = await q.query(
    `INSERT INTO api_keys (id, account_id, name, key_hash, start, daily_cap_cents, rate_limit_per_minute, mode,
       created_by)
     SELECT $1, a.id, $3, $4, $5, $6, $7, $8, $9 FROM accounts a WHERE a.id = $2
     RETURNING id, account_id, name, start, daily_cap_cents, rate_limit_per_minute, created_at, revoked_at, mode`,
    [
      k.id,
      k.accountId,
      k.name,
      k.hash,
      k.start,
      k.dailyCapCents,
      k.rateLimitPerMinute,
      k.mode,
      k.createdBy ?? null,
    ],
  );
  return (rows[0] as KeyRow | undefined) ?? null;
}

/** A revocation: the key's account, its time, and whether this call revoked it (not an earlier). */
export interface RevokedRow {
  id: string;
  account_id: string;
  revoked_at: Date;
  newly: boolean;
}

/**
 * Revokes a key (once; a second revocation keeps the first time), of `accountId` only when given;
 * null when there is no such key. `newly` says whether this call revoked it, so that only the first
 * revocation is audited.
 */
export async function revokeKeyRow(
  q: Queryable,
  keyId: string,
  accountId: string | null = null,
): Promise<RevokedRow | null> {
  const { rows } = await q.query(
    `WITH old AS (SELECT id, revoked_at FROM api_keys
                  WHERE id = $1 AND ($2::text IS NULL OR account_id = $2) FOR UPDATE)
     UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now()) FROM old WHERE k.id = old.id
     RETURNING k.id, k.account_id, k.revoked_at, old.revoked_at IS NULL AS newly`,
    [keyId, accountId],
  );
  return (rows[0] as RevokedRow | undefined) ?? null;
}

export async function keyByHash(q: Queryable, hash: Buffer): Promise<KeyLookupRow | null> {
  const { rows } = await q.query({
    name: 'key-lookup',
    // with its account's live keys and the highest limit among them (the limit they share)
    text: `SELECT k.id, k.account_id, k.name, k.start, k.created_at, k.daily_cap_cents, k.rate_limit_per_minute,
                  k.revoked_at, k.mode, a.live_keys, a.max_rate_limit_per_minute
           FROM api_keys k CROSS JOIN LATERAL (
             SELECT count(*)::int AS live_keys, max(o.rate_limit_per_minute) AS max_rate_limit_per_minute
             FROM api_keys o WHERE o.account_id = k.account_id AND o.revoked_at IS NULL
           ) a
           WHERE k.key_hash = $1`,
    values: [hash],
  });
  return (rows[0] as KeyLookupRow | undefined) ?? null;
}

export async function accountOfKey(q: Queryable, keyId: string): Promise<string | null> {
  const { rows } = await q.query<{ account_id: string }>(
    'SELECT account_id FROM api_keys WHERE id = $1',
    [keyId],
  );
  return rows[0]?.account_id ?? null;
}

/** Who made a key of the account: found (null: the operator) or not (no such key there). */
export async function creatorOfKey(
  q: Queryable,
  accountId: string,
  keyId: string,
): Promise<{ created_by: string | null; email: string | null } | null> {
  const { rows } = await q.query(
    `SELECT k.created_by, p.email FROM api_keys k LEFT JOIN people p ON p.id = k.created_by
      WHERE k.id = $1 AND k.account_id = $2`,
    [keyId, accountId],
  );
  return (rows[0] as { created_by: string | null; email: string | null } | undefined) ?? null;
}

/** Revokes the live keys a person made in the account (they were removed): their ids. */
export async function revokeKeysCreatedBy(
  q: Queryable,
  accountId: string,
  personId: string,
): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `UPDATE api_keys SET revoked_at = now()
      WHERE account_id = $1 AND created_by = $2 AND revoked_at IS NULL RETURNING id`,
    [accountId, personId],
  );
  return rows.map((r) => r.id);
}

export interface KeyUseRow extends KeyRow {
  last_used_at: Date | null;
  spent_today: number;
  created_by: string | null;
  created_by_email: string | null;
}

/**
 * The account's keys, newest first. Last use is to the minute: the newest request window of the
 * key.
 */
export async function keysWithUse(
  q: Queryable,
  accountId: string,
  timeZone: string,
): Promise<KeyUseRow[]> {
  const { rows } = await q.query({
    // prepared once per connection: its planning cost more than its run (the Usage page reads it)
    name: 'api-keys-of-account',
    text: `SELECT k.id, k.account_id, k.name, k.start, k.created_at, k.revoked_at,
            k.daily_cap_cents,
            k.rate_limit_per_minute, k.mode, k.created_by, p.email AS created_by_email,
            greatest(k.last_used_at, (SELECT to_timestamp(max(w.window_start) * 60) FROM rate_windows w
                                      WHERE w.key_id = k.id)) AS last_used_at,
            coalesce(u.spent_cents, 0) AS spent_today
     FROM api_keys k LEFT JOIN key_day_usage u ON u.key_id = k.id AND u.day = (now() AT TIME ZONE $2)::date
       LEFT JOIN people p ON p.id = k.created_by
     WHERE k.account_id = $1 ORDER BY k.id DESC`,
    values: [accountId, timeZone],
  });
  return rows as KeyUseRow[];
}

/**
 * The number of the account's live (not revoked) keys, counted under a per-account lock held by the
 * calling transaction until it ends, so parallel creations cannot pass a bound together.
 */
export async function lockAndCountLiveKeys(tx: Queryable, accountId: string): Promise<number> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('keys:' || $1, 0))", [accountId]);
  const { rows } = await tx.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL',
    [accountId],
  );
  return rows[0].n;
}
