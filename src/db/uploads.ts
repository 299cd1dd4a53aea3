// The statements on `uploads` (migrations/008).
import { transaction, type Db, type Queryable, type Tx } from './pool.ts';

export interface UploadRow {
  id: string;
  account_id: string;
  storage_key: string;
  content_type: string;
  size_bytes: number;
  width: number;
  height: number;
  created_at: Date;
  expires_at: Date;
}

export interface NewUpload {
  id: string;
  accountId: string;
  key: string;
  contentType: string;
  sizeBytes: number;
  width: number;
  height: number;
  retentionSeconds: number;
}

export async function insertUpload(q: Queryable, u: NewUpload): Promise<UploadRow> {
  const { rows } = await q.query(
    `INSERT INTO uploads (id, account_id, storage_key, content_type, size_bytes, width, height, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8)) RETURNING *`,
    [u.id, u.accountId, u.key, u.contentType, u.sizeBytes, u.width, u.height, u.retentionSeconds],
  );
  return rows[0] as UploadRow;
}

/** A kept (not deleted, not expired) upload of the account. */
export async function keptUpload(
  q: Queryable,
  accountId: string,
  id: string,
): Promise<UploadRow | null> {
  const { rows } = await q.query(
    'SELECT * FROM uploads WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND expires_at > now()',
    [id, accountId],
  );
  return (rows[0] as UploadRow | undefined) ?? null;
}

export async function keptUploads(
  q: Queryable,
  accountId: string,
  after: string | null,
  limit: number,
): Promise<UploadRow[]> {
  const { rows } = await q.query(
    `SELECT * FROM uploads WHERE account_id = $1 AND deleted_at IS NULL AND expires_at > now()
       AND ($2::text IS NULL OR id < $2)
     ORDER BY id DESC LIMIT $3`,
    [accountId, after, limit],
  );
  return rows as UploadRow[];
}

/** The ids among `ids` that are kept uploads of the account. */
export async function keptUploadIds(
  q: Queryable,
  accountId: string,
  ids: string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await q.query<{ id: string }>(
    'SELECT id FROM uploads WHERE id = ANY ($1) AND account_id = $2 AND deleted_at IS NULL AND expires_at > now()',
    [ids, accountId],
  );
  return new Set(rows.map((r) => r.id));
}

/** Marks a kept upload deleted; its storage key, or null when there was none. */
export async function markUploadDeleted(
  q: Queryable,
  accountId: string,
  id: string,
): Promise<string | null> {
  const { rows } = await q.query<{ storage_key: string }>(
    `UPDATE uploads SET deleted_at = now()
     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND expires_at > now()
     RETURNING storage_key`,
    [id, accountId],
  );
  return rows[0]?.storage_key ?? null;
}

export async function deleteUploadRows(q: Queryable, ids: string[]): Promise<void> {
  await q.query('DELETE FROM uploads WHERE id = ANY ($1)', [ids]);
}

/** Up to 100 expired or deleted uploads, locked for their removal (passing over locked ones). */
export async function lockGoneUploads(tx: Tx): Promise<Array<{ id: string; storage_key: string }>> {
  const { rows } = await tx.query(
    `SELECT id, storage_key FROM uploads WHERE expires_at < now() OR deleted_at IS NOT NULL
     LIMIT 100 FOR UPDATE SKIP LOCKED`,
  );
  return rows as Array<{ id: string; storage_key: string }>;
}

/**
 * The storage key and type of upload `uploadId` when it is kept and of the account of render
 * `generationId`.
 */
export async function uploadForRender(
  q: Queryable,
  generationId: string,
  uploadId: string,
): Promise<{ storage_key: string; content_type: string } | null> {
  const { rows } = await q.query({
    name: 'upload-for-render',
    text: `SELECT u.storage_key, u.content_type FROM uploads u JOIN generations g ON g.account_id = u.account_id
           WHERE g.id = $1 AND u.id = $2 AND u.deleted_at IS NULL AND u.expires_at > now()`,
    values: [generationId, uploadId],
  });
  return (rows[0] as { storage_key: string; content_type: string } | undefined) ?? null;
}

// The upload quota: an account's live uploads counted under a per-account advisory lock held by the
// transaction that then inserts the new row, so parallel uploads of one account are counted one
// after the other and together never pass the quota.

export interface UploadUsage {
  usedBytes: number;
  count: number;
}
export interface Quota {
  bytes: number;
  count: number;
}

/** Bytes and number of the account's live (not deleted, not expired) uploads. */
export async function uploadUsage(q: Queryable, accountId: string): Promise<UploadUsage> {
  const { rows } = await q.query<{ bytes: number; n: number }>(
    `SELECT coalesce(sum(size_bytes), 0)::bigint AS bytes, count(*)::int AS n
     FROM uploads WHERE account_id = $1 AND deleted_at IS NULL AND expires_at > now()`,
    [accountId],
  );
  return { usedBytes: Number(rows[0].bytes), count: rows[0].n };
}

/** Whether one more upload of `sizeBytes` stays within the quota. */
export const fits = (u: UploadUsage, sizeBytes: number, q: Quota) =>
  u.usedBytes + sizeBytes <= q.bytes && u.count + 1 <= q.count;

/**
 * Inserts the upload's row if the account's live uploads and this one stay within the quota: the
 * row, or the usage that refused it.
 */
export async function insertWithinQuota(
  db: Db,
  u: NewUpload,
  q: Quota,
): Promise<{ row: UploadRow } | { refused: UploadUsage }> {
  return transaction(db, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('uploads:' || $1, 0))", [
      u.accountId,
    ]);
    const usage = await uploadUsage(tx, u.accountId);
    if (!fits(usage, u.sizeBytes, q)) return { refused: usage };
    return { row: await insertUpload(tx, u) };
  });
}
