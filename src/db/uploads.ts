// The statements on `uploads` (migrations/008) and on each account's count of them, `upload_usage`
// (migrations/022): every statement that writes a row, marks one deleted or removes one not marked
// changes the count in the same statement, so it always equals the sum over the account's rows with
// deleted_at null.
import type { Queryable, Tx } from './pool.ts';

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

/** Marks a kept upload deleted, and takes it off the account's count; its storage key, or null when there was none. */
export async function markUploadDeleted(
  q: Queryable,
  accountId: string,
  id: string,
): Promise<string | null> {
  const { rows } = await q.query<{ storage_key: string }>(
    `WITH gone AS (
       UPDATE uploads SET deleted_at = now()
       WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND expires_at > now()
       RETURNING storage_key, size_bytes
     ), counted AS (
       UPDATE upload_usage u SET bytes = u.bytes - gone.size_bytes, uploads = u.uploads - 1
       FROM gone WHERE u.account_id = $2
     )
     SELECT storage_key FROM gone`,
    [id, accountId],
  );
  return rows[0]?.storage_key ?? null;
}

/**
 * Removes upload rows; those not marked deleted (expired ones the janitor removes) are taken off their
 * accounts' counts in the same statement. Two janitors removing uploads of the same accounts at once
 * may deadlock on the counts: PostgreSQL ends one, whose files are already gone and whose rows the
 * next pass removes.
 */
export async function deleteUploadRows(q: Queryable, ids: string[]): Promise<void> {
  await q.query(
    `WITH d AS (
       DELETE FROM uploads WHERE id = ANY ($1) RETURNING account_id, size_bytes, deleted_at
     ), gone AS (
       SELECT account_id, sum(size_bytes)::bigint AS bytes, count(*)::int AS n
       FROM d WHERE deleted_at IS NULL GROUP BY account_id
     )
     UPDATE upload_usage u SET bytes = u.bytes - gone.bytes, uploads = u.uploads - gone.n
     FROM gone WHERE u.account_id = gone.account_id`,
    [ids],
  );
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

// The upload quota: an account's count of its uploads (upload_usage) is raised by the statement that
// writes the new row, only while the count and the new upload stay within the quota. Parallel uploads
// of one account take the count's row one after the other (ON CONFLICT DO UPDATE tests its condition
// on the row's latest version), so together they never pass the quota.

export interface UploadUsage {
  usedBytes: number;
  count: number;
}
export interface Quota {
  bytes: number;
  count: number;
}

/** Bytes and number of the account's uploads not marked deleted (expired ones included until marked). */
export async function uploadUsage(q: Queryable, accountId: string): Promise<UploadUsage> {
  const { rows } = await q.query<{ bytes: number; uploads: number }>(
    'SELECT bytes, uploads FROM upload_usage WHERE account_id = $1',
    [accountId],
  );
  return { usedBytes: rows[0]?.bytes ?? 0, count: rows[0]?.uploads ?? 0 };
}

/** Whether one more upload of `sizeBytes` stays within the quota. */
export const fits = (u: UploadUsage, sizeBytes: number, q: Quota) =>
  u.usedBytes + sizeBytes <= q.bytes && u.count + 1 <= q.count;

/**
 * The account's usage, for an upload of `sizeBytes`: when its count refuses it, the account's expired
 * uploads are released first (releaseExpiredUploads), so that only uploads still kept refuse it.
 */
export async function usageFor(
  q: Queryable,
  accountId: string,
  sizeBytes: number,
  quota: Quota,
): Promise<UploadUsage> {
  const usage = await uploadUsage(q, accountId);
  return fits(usage, sizeBytes, quota) ? usage : releaseExpiredUploads(q, accountId);
}

/**
 * Marks the account's uploads past their expiry deleted and takes them off its count, in one
 * statement; the account's usage after. Their files go with the janitor's next pass.
 */
export async function releaseExpiredUploads(q: Queryable, accountId: string): Promise<UploadUsage> {
  const { rows } = await q.query<{ bytes: number; uploads: number }>(
    `WITH gone AS (
       UPDATE uploads SET deleted_at = now()
       WHERE account_id = $1 AND deleted_at IS NULL AND expires_at <= now()
       RETURNING size_bytes
     )
     UPDATE upload_usage SET bytes = bytes - (SELECT coalesce(sum(size_bytes), 0) FROM gone),
       uploads = uploads - (SELECT count(*) FROM gone)::int
     WHERE account_id = $1
     RETURNING bytes, uploads`,
    [accountId],
  );
  return { usedBytes: rows[0]?.bytes ?? 0, count: rows[0]?.uploads ?? 0 };
}

const INSERT_WITHIN_QUOTA = `
WITH counted AS (
  INSERT INTO upload_usage AS u (account_id, bytes, uploads)
  SELECT $2::text, $5::bigint, 1 WHERE $5::bigint <= $9::bigint AND 1 <= $10::int
  ON CONFLICT (account_id) DO UPDATE SET bytes = u.bytes + excluded.bytes, uploads = u.uploads + 1
    WHERE u.bytes + excluded.bytes <= $9::bigint AND u.uploads + 1 <= $10::int
  RETURNING 1
)
INSERT INTO uploads (id, account_id, storage_key, content_type, size_bytes, width, height, expires_at)
SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $6::int, $7::int,
  now() + make_interval(secs => $8::float8)
FROM counted
RETURNING *`;

/**
 * Inserts the upload's row if the account's uploads and this one stay within the quota, counting it in
 * the same statement: the row, or the usage that refused it. A refusal first releases the account's
 * expired uploads (releaseExpiredUploads) and tries once more, so only uploads still kept refuse it.
 */
export async function insertWithinQuota(
  q: Queryable,
  u: NewUpload,
  quota: Quota,
): Promise<{ row: UploadRow } | { refused: UploadUsage }> {
  const values = [
    u.id,
    u.accountId,
    u.key,
    u.contentType,
    u.sizeBytes,
    u.width,
    u.height,
    u.retentionSeconds,
    quota.bytes,
    quota.count,
  ];
  const insert = () =>
    q.query<UploadRow>({ name: 'upload-within-quota', text: INSERT_WITHIN_QUOTA, values });
  let { rows } = await insert();
  if (rows.length === 0) {
    const usage = await releaseExpiredUploads(q, u.accountId);
    if (!fits(usage, u.sizeBytes, quota)) return { refused: usage };
    ({ rows } = await insert());
    // room another upload of the account took between the release and this try
    if (rows.length === 0) return { refused: await uploadUsage(q, u.accountId) };
  }
  return { row: rows[0] };
}
