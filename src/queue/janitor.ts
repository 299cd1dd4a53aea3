// Periodic housekeeping, safe to run in every worker process at once (each step is guarded):
// renders stuck past their deadline end failed and refunded; files of deleted or refunded renders are
// removed; files of succeeded renders past their expires_at, and uploads expired or deleted, are removed
// (each once, on whichever node locks it first); idempotency records older than 25 h (docs/api.md
// promises at least 24 h; the hour more is margin) and stale rate-limit windows and webhook deliveries
// finished over 30 days ago are pruned.
import type { Logger } from 'pino';
import type { Db } from '../db/pool.ts';
import { unlessBackingUp } from '../db/backup-lock.ts';
import {
  filesToPurge,
  forgetContent,
  lockExpiredFiles,
  markContentRemoved,
  pastDeadline,
} from '../db/generations.ts';
import { deleteUploadRows, lockGoneUploads } from '../db/uploads.ts';
import { pruneDeliveries } from '../db/webhook-deliveries.ts';
import { pruneIdempotencyKeys } from '../db/idempotency-keys.ts';
import { pruneWindows } from '../db/rate-windows.ts';
import { prunePaces } from '../db/admission-paces.ts';
import { pruneEndedSessions } from '../db/studio-sessions.ts';
import { pruneEndedTokens } from '../db/studio-tokens.ts';
import { pruneSignInFlows } from '../db/sign-in-flows.ts';
import { pruneAttempts } from '../db/studio-attempts.ts';
import type { Storage } from '../storage/storage.ts';
import { isSharedTestOutput } from './test-stored.ts';
import { removeOrphans } from './orphans.ts';
import type { Ledger } from '../ledger/ledger.ts';

const IDEMPOTENCY_KEEP_HOURS = 25;
const ORPHAN_SWEEP_EVERY_MS = 10 * 60_000;

export class Janitor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastOrphanSweep = 0;

  private db: Db;
  private storage: Storage;
  private log: Logger;
  private ledger: Ledger;
  private everyMs: number;

  /** `ledger`: the refunds of renders past their deadline; `everyMs`: the sweep's period. */
  constructor(o: { db: Db; storage: Storage; log: Logger; ledger: Ledger; everyMs?: number }) {
    ({ db: this.db, storage: this.storage, log: this.log, ledger: this.ledger } = o);
    this.everyMs = o.everyMs ?? 5_000;
  }

  start() {
    this.timer = setInterval(() => {
      this.running ??= this.sweep().finally(() => {
        this.running = null;
      });
    }, this.everyMs);
    this.timer.unref();
  }

  async stop() {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Removes the files of succeeded renders past their expires_at; content then answers 410. */
  async expireOutputs(): Promise<number> {
    let removed = 0;
    // Not while a backup copies the files its snapshot names (db/backup-lock.ts); a later sweep does it.
    await unlessBackingUp(this.db, async (tx) => {
      const rows = await lockExpiredFiles(tx);
      // A test output other rows may name too: this row forgets it, the orphan sweep removes it.
      for (const r of rows)
        if (!isSharedTestOutput(r.content_key)) await this.storage.delete(r.content_key);
      if (rows.length > 0)
        await markContentRemoved(
          tx,
          rows.map((r) => r.id),
        );
      removed = rows.length;
    });
    return removed;
  }

  /** Removes expired and deleted uploads, file first, then the row. */
  async removeUploads(): Promise<number> {
    let removed = 0;
    await unlessBackingUp(this.db, async (tx) => {
      const rows = await lockGoneUploads(tx);
      for (const r of rows) await this.storage.delete(r.storage_key);
      if (rows.length > 0)
        await deleteUploadRows(
          tx,
          rows.map((r) => r.id),
        );
      removed = rows.length;
    });
    return removed;
  }

  async sweep(): Promise<void> {
    try {
      for (const id of await pastDeadline(this.db)) {
        const done = await this.ledger.refund(id, 'queued', {
          status: 'failed',
          code: 'RENDER_DEADLINE_EXCEEDED',
          message: 'The render did not finish before its deadline.',
        });
        if (done !== null)
          this.log.warn({ generationId: id }, 'render passed its deadline; failed and refunded');
      }
      // Skipped while a backup copies the files its snapshot names (db/backup-lock.ts); the next sweep does it.
      await unlessBackingUp(this.db, async (tx) => {
        for (const { id, content_key } of await filesToPurge(tx)) {
          if (!isSharedTestOutput(content_key)) await this.storage.delete(content_key);
          await forgetContent(tx, id, content_key);
        }
      });
      await this.expireOutputs();
      await this.removeUploads();
      // Listing the store is the costly part (S3 lists are billed): every ORPHAN_SWEEP_EVERY_MS only.
      if (Date.now() - this.lastOrphanSweep >= ORPHAN_SWEEP_EVERY_MS) {
        this.lastOrphanSweep = Date.now();
        const orphans = await removeOrphans(this.db, this.storage);
        if (orphans.length > 0)
          this.log.info({ count: orphans.length }, 'removed stored files no row names');
      }
      // Studio rows that can no longer be used: ended sessions and spent links a day on, attempt
      // counts whose windows no longer count (the longest window is an hour: sign-ups).
      await pruneEndedSessions(this.db);
      await pruneEndedTokens(this.db);
      await pruneSignInFlows(this.db); // codes awaited and OIDC requests, a day past their end
      await pruneAttempts(this.db, 3600);
      // Finished webhook deliveries are kept 30 days for the deliveries list, then pruned.
      await pruneDeliveries(this.db);
      await pruneIdempotencyKeys(this.db, IDEMPOTENCY_KEEP_HOURS);
      // Request counts of windows that ended over an hour ago (rate-limits.ts: windows are minutes since the epoch),
      // folded into each key's last use (shown in the studio) as they go.
      await pruneWindows(this.db, Math.floor(Date.now() / 60_000) - 60);
      // Upload turns and body budgets full again for a minute (admission/shared-pace.ts): an absent
      // schedule is a full one, and the minute covers processes' clocks a little apart.
      await prunePaces(this.db, Date.now() - 60_000);
    } catch (e) {
      this.log.warn({ err: e }, 'housekeeping sweep failed; will retry');
    }
  }
}
