// The fencing token of a render attempt. Every claim increments generations.attempts and sets
// lease_owner to the claiming worker, so (lease_owner, attempts) names one attempt of one render, never
// reused: a worker that stalls past its lease, wakes late, or runs one render twice in one process holds
// a token that no longer matches the row once any later claim has happened. Every statement that acts for
// an attempt (lease renewal, finish, retry, failure and its refund, hand-back at shutdown, and anything
// added later that writes on an attempt's behalf) carries `leaseGuard` in its WHERE clause, and so does
// nothing once its attempt is superseded.

/** One attempt's token, carried on each claimed job (ClaimedJob.lease). */
export interface Lease {
  /** The claiming worker (hostname, pid and a random part). */
  owner: string;
  /** generations.attempts as this attempt's claim set it. */
  attempt: number;
}

/**
 * The guard of a statement acting for an attempt, on a queued generation: `id`, `owner` and `attempt` are
 * the statement's parameter references (e.g. '$1', '$2', '$3'). Written as the row's own columns, so it
 * composes into any UPDATE ... WHERE on generations (qualify with `table`, e.g. 'g', when joined).
 */
export function leaseGuard(id: string, owner: string, attempt: string, table?: string): string {
  const c = table ? `${table}.` : '';
  return `${c}id = ${id} AND ${c}status = 'queued' AND ${c}lease_owner = ${owner} AND ${c}attempts = ${attempt}`;
}
