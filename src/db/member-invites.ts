// The statements on `member_invites` (migrations/030): invitations to join an account with a role,
// stored as the SHA-256 of their link's secret. At most one is pending per account and email.
import type { Role } from '../domain/principal.ts';
import type { Queryable } from './pool.ts';

export interface InviteRow {
  account_id: string;
  email: string;
  role: Role;
  created_at: Date;
  expires_at: Date;
}

const PENDING = 'used_at IS NULL AND voided_at IS NULL';
const LIVE = `token_hash = $1 AND ${PENDING} AND expires_at > now()`;

/** Voids the pending invite of `email` to the account (a new one replaces it, or it is revoked). */
export async function voidInvite(q: Queryable, accountId: string, email: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE member_invites SET voided_at = now()
      WHERE account_id = $1 AND lower(email) = lower($2) AND ${PENDING}`,
    [accountId, email],
  );
  return (rowCount ?? 0) > 0;
}

/** A new invite (the caller voided any pending one of the same email first). */
export async function insertInvite(
  q: Queryable,
  i: { hash: Buffer; accountId: string; email: string; role: Role; by: string | null },
  seconds: number,
): Promise<Date> {
  const { rows } = await q.query<{ expires_at: Date }>(
    `INSERT INTO member_invites (token_hash, account_id, email, role, invited_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6)) RETURNING expires_at`,
    [i.hash, i.accountId, i.email, i.role, i.by, seconds],
  );
  return rows[0].expires_at;
}

/** The account's pending, unexpired invites, newest first. */
export async function pendingInvites(q: Queryable, accountId: string): Promise<InviteRow[]> {
  const { rows } = await q.query({
    // prepared once per connection: every Usage and Members page reads it
    name: 'pending-invites',
    text: `SELECT account_id, email, role, created_at, expires_at FROM member_invites
      WHERE account_id = $1 AND ${PENDING} AND expires_at > now() ORDER BY created_at DESC`,
    values: [accountId],
  });
  return rows as InviteRow[];
}

/** A live invite of a link's hash (pending, unexpired), without using it, with its account's name. */
export async function liveInvite(
  q: Queryable,
  hash: Buffer,
): Promise<(InviteRow & { account_label: string }) | null> {
  const { rows } = await q.query(
    `SELECT i.account_id, i.email, i.role, i.created_at, i.expires_at,
            COALESCE(a.name, a.email) AS account_label
       FROM member_invites i JOIN accounts a ON a.id = i.account_id
      WHERE i.token_hash = $1 AND i.used_at IS NULL AND i.voided_at IS NULL
        AND i.expires_at > now()`,
    [hash],
  );
  return (rows[0] as (InviteRow & { account_label: string }) | undefined) ?? null;
}

/** Uses a live invite, once, in the statement that checks it; null when it is not live. */
export async function useInvite(q: Queryable, hash: Buffer): Promise<InviteRow | null> {
  const { rows } = await q.query(
    `UPDATE member_invites SET used_at = now() WHERE ${LIVE}
     RETURNING account_id, email, role, created_at, expires_at`,
    [hash],
  );
  return (rows[0] as InviteRow | undefined) ?? null;
}

/**
 * Uses every live invite of an email at once (a person made by single sign-on joins what they
 * were invited to); the invites used.
 */
export async function useInvitesOfEmail(q: Queryable, email: string): Promise<InviteRow[]> {
  const { rows } = await q.query(
    `UPDATE member_invites SET used_at = now()
      WHERE lower(email) = lower($1) AND used_at IS NULL AND voided_at IS NULL
        AND expires_at > now()
     RETURNING account_id, email, role, created_at, expires_at`,
    [email],
  );
  return rows as InviteRow[];
}
