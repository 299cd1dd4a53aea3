// The statements on the pending steps of a sign-in (migrations/035): a right password waiting for
// its code (sign_in_challenges), an OpenID Connect request waiting for its callback
// (oidc_requests). Secrets are stored as their SHA-256; each row is used once, by the statement
// that checks it.
import type { Queryable } from './pool.ts';

export async function insertChallenge(
  q: Queryable,
  idHash: Buffer,
  personId: string,
  via: string,
  next: string,
  seconds: number,
): Promise<void> {
  await q.query(
    `INSERT INTO sign_in_challenges (id_hash, person_id, via, next_path, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [idHash, personId, via, next, seconds],
  );
}

export interface ChallengeRow {
  person_id: string;
  via: string;
  next_path: string;
}

const LIVE_CHALLENGE = 'id_hash = $1 AND used_at IS NULL AND expires_at > now()';

/** A live challenge, without using it. */
export async function liveChallenge(q: Queryable, idHash: Buffer): Promise<ChallengeRow | null> {
  const { rows } = await q.query<ChallengeRow>(
    `SELECT person_id, via, next_path FROM sign_in_challenges WHERE ${LIVE_CHALLENGE}`,
    [idHash],
  );
  return rows[0] ?? null;
}

/** Uses a live challenge, once; null when it is not live (used, expired, unknown). */
export async function useChallenge(q: Queryable, idHash: Buffer): Promise<ChallengeRow | null> {
  const { rows } = await q.query<ChallengeRow>(
    `UPDATE sign_in_challenges SET used_at = now() WHERE ${LIVE_CHALLENGE}
     RETURNING person_id, via, next_path`,
    [idHash],
  );
  return rows[0] ?? null;
}

export async function insertOidcRequest(
  q: Queryable,
  r: {
    stateHash: Buffer;
    browserHash: Buffer;
    nonce: string;
    codeVerifier: string;
    next: string;
    seconds: number;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO oidc_requests (state_hash, browser_hash, nonce, code_verifier, next_path,
       expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [r.stateHash, r.browserHash, r.nonce, r.codeVerifier, r.next, r.seconds],
  );
}

export interface OidcRequestRow {
  nonce: string;
  code_verifier: string;
  next_path: string;
}

/**
 * Uses the live request of `state` started by this browser, once: a callback replayed, from
 * another browser, or after its time is refused (null).
 */
export async function useOidcRequest(
  q: Queryable,
  stateHash: Buffer,
  browserHash: Buffer,
): Promise<OidcRequestRow | null> {
  const { rows } = await q.query<OidcRequestRow>(
    `UPDATE oidc_requests SET used_at = now()
      WHERE state_hash = $1 AND browser_hash = $2 AND used_at IS NULL AND expires_at > now()
     RETURNING nonce, code_verifier, next_path`,
    [stateHash, browserHash],
  );
  return rows[0] ?? null;
}

/** Removes steps that ended a day ago or more, at most 5,000 of each a call (the janitor). */
export async function pruneSignInFlows(q: Queryable): Promise<void> {
  for (const table of ['sign_in_challenges', 'oidc_requests'])
    await q.query(
      `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table}
         WHERE expires_at < now() - interval '1 day' LIMIT 5000))`,
    );
}
