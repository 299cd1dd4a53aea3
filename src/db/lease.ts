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

/** The extensions an output key can have, by its content type. */
const OUTPUT_EXTENSIONS = ['mp4', 'bin'] as const;
const outputExtension = (contentType: string) => (contentType === 'video/mp4' ? 'mp4' : 'bin');
const outputKey = (generationId: string, attempt: number, ext: string) => `generations/${generationId}-${attempt}.${ext}`;

/** The storage key of an attempt's output file: each attempt writes its own, so a losing one removes only its own. */
export function attemptOutputKey(generationId: string, attempt: number, contentType: string): string {
  return outputKey(generationId, attempt, outputExtension(contentType));
}

/** Every key attempts 1 to `before - 1` of a generation could have stored its output under. */
export function earlierAttemptOutputKeys(generationId: string, before: number): string[] {
  const keys = [];
  for (let attempt = 1; attempt < before; attempt++) {
    for (const ext of OUTPUT_EXTENSIONS) keys.push(outputKey(generationId, attempt, ext));
  }
  return keys;
}
