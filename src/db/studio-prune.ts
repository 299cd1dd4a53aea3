// Rows of the studio that can no longer be used, removed by the janitor so that none grows without
// bound: sessions that ended (signed out, idle or past their end) and one-time links that were
// used, voided or expired, a day after; attempt counts whose windows can no longer count.
import type { Db } from './pool.ts';
import { pruneAttempts } from './studio-attempts.ts';

/** The longest attempt window (sign-ups per hour, src/services/attempt-limits.ts). */
const LONGEST_WINDOW_S = 3600;

export async function pruneStudio(db: Db): Promise<void> {
  // A session idle for 2 h has ended (src/studio/sessions.ts); two days is past any session's end.
  await db.query(
    `DELETE FROM studio_sessions WHERE ctid = ANY(ARRAY(SELECT ctid FROM studio_sessions
       WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'
          OR last_seen_at < now() - interval '2 days' LIMIT 5000))`);
  await db.query(
    `DELETE FROM studio_tokens WHERE ctid = ANY(ARRAY(SELECT ctid FROM studio_tokens
       WHERE expires_at < now() - interval '1 day' OR used_at < now() - interval '1 day'
       LIMIT 5000))`);
  await pruneAttempts(db, LONGEST_WINDOW_S);
}
