// LISTEN/NOTIFY channels: a new job (payload: model id), a cancelled generation (payload: its id), and a
// generation whose visible state changed (payload: its id; sent by a trigger, migrations/005, 008). The last
// also carries, to the API processes that already LISTEN on it, the streamed text of chat renders of
// other processes (payload `text:<id> …`, src/queue/live-text.ts).
export const JOBS_CHANNEL = 'rendergate_jobs';
export const CANCEL_CHANNEL = 'rendergate_cancel';
export const GENERATION_CHANGED_CHANNEL = 'rendergate_generation_changed';
/**
 * Something a live studio session depends on changed (a session signed out or switched, a
 * membership, a person's email or second factor, an account's name or second-factor requirement):
 * sent by the statement triggers of src/db/sql/session_changed.sql; services/session-cache.ts
 * drops what it kept.
 */
export const SESSIONS_CHANNEL = 'rendergate_sessions';
/**
 * A statement changed what a key's lookup reads (a key made, revoked or changed): sent by the
 * statement trigger of src/db/sql/keys_changed.sql; services/key-resolver.ts drops what it kept.
 */
export const KEYS_CHANNEL = 'rendergate_keys';
/** A webhook delivery was written (by the trigger of migrations/009, only when one was). */
export const WEBHOOKS_CHANNEL = 'rendergate_webhooks';

/** Sends `payload` on `channel` (inside a transaction: delivered at its commit). */
export async function notify(
  q: import('./pool.ts').Queryable,
  channel: string,
  payload: string,
): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [channel, payload]);
}
