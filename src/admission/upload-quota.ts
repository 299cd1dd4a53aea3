// The upload quota's refusals (docs/account-limits.md): the 409 and this process's memory of the
// accounts it refused. The quota itself is decided by the database, by the statement that records
// an upload and counts it (db/uploads.ts insertWithinQuota); the memory only refuses sooner and
// cheaper what the database has just refused.
import { fits, type Quota, type UploadUsage } from '../db/uploads.ts';
import { ApiError } from '../domain/errors.ts';
import { RefusedUntil } from './refused-until.ts';

/**
 * How long this process remembers the usage that refused an account an upload: within it, an
 * upload that would not fit that usage is refused without a statement, and POST /v1/uploads is
 * refused before its body is read. A delete through this process forgets it at once; room made
 * otherwise (an upload expiring, a delete through another process) is seen at most this late.
 */
export const OVER_QUOTA_MEMORY_MS = 1_000;

export class UploadQuota {
  private refused = new RefusedUntil<UploadUsage>();
  constructor(readonly limits: Quota) {}

  /** The 409 of an upload that would take the account past its quota, from the usage that refused it. */
  error(u: UploadUsage): ApiError {
    const q = { quotaBytes: this.limits.bytes, quotaCount: this.limits.count };
    return new ApiError(
      'UPLOAD_QUOTA_EXCEEDED',
      `This upload would take the account past its quota (${u.usedBytes} of ${q.quotaBytes} bytes, ` +
        `${u.count} of ${q.quotaCount} uploads held); delete uploads (GET /v1/uploads lists them) or wait until they expire.`,
      [
        {
          usedBytes: u.usedBytes,
          quotaBytes: q.quotaBytes,
          count: u.count,
          quotaCount: q.quotaCount,
        },
      ],
    );
  }

  /** The database refused the account at `usage`: remembered, and its 409. */
  refuse(accountId: string, usage: UploadUsage, nowMs = Date.now()): ApiError {
    this.refused.set(accountId, nowMs + OVER_QUOTA_MEMORY_MS, nowMs, usage);
    return this.error(usage);
  }

  /**
   * The 409 of an upload of `sizeBytes` (null: a size not known yet, refused only when not one
   * more byte fits) that the usage remembered for the account refuses; null when none is
   * remembered or the upload fits it. No statement, no promise.
   */
  early(accountId: string, sizeBytes: number | null, nowMs = Date.now()): ApiError | null {
    const usage = this.refused.get(accountId, nowMs);
    if (usage === undefined || fits(usage, Math.max(1, sizeBytes ?? 1), this.limits)) return null;
    return this.error(usage);
  }

  /** This process made room (a delete): the next upload asks the database again. */
  forget(accountId: string): void {
    this.refused.delete(accountId);
  }
}
