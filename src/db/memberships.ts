// The statements on `memberships` (migrations/030): who is a member of an account, with which role.
// Changes to an account's members take the account's member lock first (lockMembers), so that the
// owner count they check cannot change under them (two owners demoting each other leave one).
import type { Role } from '../domain/principal.ts';
import type { Queryable } from './pool.ts';

export interface MemberRow {
  person_id: string;
  email: string;
  role: Role;
  joined_at: Date;
}

/** Serializes changes to an account's members until the transaction ends. */
export async function lockMembers(q: Queryable, accountId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('members:' || $1, 0))", [accountId]);
}

/** The first owner of an account (the person who signed up with it, until others are made). */
export async function ownerOf(q: Queryable, accountId: string): Promise<string | null> {
  const { rows } = await q.query<{ person_id: string }>(
    `SELECT person_id FROM memberships WHERE account_id = $1 AND role = 'owner'
      ORDER BY joined_at, person_id LIMIT 1`,
    [accountId],
  );
  return rows[0]?.person_id ?? null;
}

export async function membersOf(q: Queryable, accountId: string): Promise<MemberRow[]> {
  const { rows } = await q.query({
    // prepared once per connection: every Usage and Members page reads it
    name: 'members-of-account',
    text: `SELECT m.person_id, p.email, m.role, m.joined_at FROM memberships m
       JOIN people p ON p.id = m.person_id
      WHERE m.account_id = $1 ORDER BY m.joined_at, p.email`,
    values: [accountId],
  });
  return rows as MemberRow[];
}

export async function memberOf(
  q: Queryable,
  accountId: string,
  personId: string,
): Promise<MemberRow | null> {
  const { rows } = await q.query(
    `SELECT m.person_id, p.email, m.role, m.joined_at FROM memberships m
       JOIN people p ON p.id = m.person_id WHERE m.account_id = $1 AND m.person_id = $2`,
    [accountId, personId],
  );
  return (rows[0] as MemberRow | undefined) ?? null;
}

/** The emails of an account's owners and billing members, who are told about its money. */
export async function billingContacts(q: Queryable, accountId: string): Promise<string[]> {
  const { rows } = await q.query<{ email: string }>(
    `SELECT p.email FROM memberships m JOIN people p ON p.id = m.person_id
      WHERE m.account_id = $1 AND m.role IN ('owner', 'billing') ORDER BY p.email`,
    [accountId],
  );
  return rows.map((r) => r.email);
}

export async function countOwners(q: Queryable, accountId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM memberships WHERE account_id = $1 AND role = 'owner'",
    [accountId],
  );
  return rows[0].n;
}

/** Adds a member; false when they are one already (their role unchanged). */
export async function addMember(
  q: Queryable,
  accountId: string,
  personId: string,
  role: Role,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO memberships (account_id, person_id, role) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING`,
    [accountId, personId, role],
  );
  return rowCount === 1;
}

export async function setRole(
  q: Queryable,
  accountId: string,
  personId: string,
  role: Role,
): Promise<void> {
  await q.query('UPDATE memberships SET role = $3 WHERE account_id = $1 AND person_id = $2', [
    accountId,
    personId,
    role,
  ]);
}

export async function deleteMember(
  q: Queryable,
  accountId: string,
  personId: string,
): Promise<void> {
  await q.query('DELETE FROM memberships WHERE account_id = $1 AND person_id = $2', [
    accountId,
    personId,
  ]);
}

/** The accounts of a person, for the switcher: id, name (or its email), role. */
export async function accountsOfPerson(
  q: Queryable,
  personId: string,
): Promise<{ id: string; label: string; role: Role }[]> {
  const { rows } = await q.query(
    `SELECT a.id, COALESCE(a.name, a.email) AS label, m.role FROM memberships m
       JOIN accounts a ON a.id = m.account_id WHERE m.person_id = $1 ORDER BY label, a.id`,
    [personId],
  );
  return rows as { id: string; label: string; role: Role }[];
}
