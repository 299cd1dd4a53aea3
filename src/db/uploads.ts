// SQL of the uploads table: an account's live uploads (not deleted, not expired) and the quota they
// count against. The quota is kept by a per-account advisory lock held by the transaction that
// counts the live uploads and inserts the new row: parallel uploads of one account are counted one
// after the other, so together they never pass the quota.
import { transaction, type Queryable, type Db } from './pool.ts';

export interface UploadUsage { usedBytes: number; count: number }
export interface Quota { bytes: number; count: number }
export interface NewUpload {
  id: string; accountId: string; storageKey: string; contentType: string; sizeBytes: number;
  width: number; height: number; retentionSeconds: number;
}

const LIVE = 'account_id = $1 AND deleted_at IS NULL AND expires_at > now()';

/** Bytes and number of the account's live uploads. */
export async function uploadUsage(db: Queryable, accountId: string): Promise<UploadUsage> {
  const { rows } = await db.query(
    `SELECT coalesce(sum(size_bytes), 0)::bigint AS bytes, count(*)::int AS n
     FROM uploads WHERE ${LIVE}`, [accountId]);
  return { usedBytes: Number(rows[0].bytes), count: rows[0].n as number };
}

/** Whether one more upload of `sizeBytes` stays within the quota. */
export const fits = (u: UploadUsage, sizeBytes: number, q: Quota) =>
  u.usedBytes + sizeBytes <= q.bytes && u.count + 1 <= q.count;

/**
 * Inserts the upload's row if the account's live uploads and this one stay within the quota: the
 * row, or the usage that refused it.
 */
export async function insertWithinQuota(db: Db, u: NewUpload, q: Quota):
  Promise<{ row: Record<string, unknown> } | { refused: UploadUsage }> {
  return transaction(db, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('uploads:' || $1, 0))",
      [u.accountId]);
    const usage = await uploadUsage(tx, u.accountId);
    if (!fits(usage, u.sizeBytes, q)) return { refused: usage };
    const { rows } = await tx.query(
      `INSERT INTO uploads
         (id, account_id, storage_key, content_type, size_bytes, width, height, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8)) RETURNING *`,
      [u.id, u.accountId, u.storageKey, u.contentType, u.sizeBytes, u.width, u.height,
        u.retentionSeconds]);
    return { row: rows[0] as Record<string, unknown> };
  });
}
