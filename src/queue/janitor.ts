// Periodic housekeeping, safe to run in every worker process at once (each step is guarded):
// renders stuck past their deadline end failed and refunded; files of deleted or refunded renders are
// removed; idempotency records older than 24 h and stale rate-limit windows are pruned.
import type { Logger } from 'pino';
import { transaction, type Db } from '../db/pool.ts';
import { refundGeneration } from '../db/refunds.ts';
import { unlessBackingUp } from '../db/backup-lock.ts';
import type { Storage } from '../storage/storage.ts';

const IDEMPOTENCY_KEEP_HOURS = 25;

export class Janitor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private db: Db, private storage: Storage, private log: Logger, private everyMs = 5_000) {}

  start() {
    this.timer = setInterval(() => { this.running ??= this.sweep().finally(() => { this.running = null; }); }, this.everyMs);
    this.timer.unref();
  }

  async stop() {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  async sweep(): Promise<void> {
    try {
      const stuck = await this.db.query(
        `SELECT id FROM generations WHERE status = 'queued' AND deadline_at < now() ORDER BY deadline_at LIMIT 100`);
      for (const { id } of stuck.rows) {
        const done = await transaction(this.db, (tx) => refundGeneration(tx, id, 'queued', {
          status: 'failed', code: 'RENDER_DEADLINE_EXCEEDED', message: 'The render did not finish before its deadline.',
        }));
        if (done !== null) this.log.warn({ generationId: id }, 'render passed its deadline; failed and refunded');
      }
      // Skipped while a backup copies the files its snapshot names (db/backup-lock.ts); the next sweep does it.
      await unlessBackingUp(this.db, async (tx) => {
        const purge = await tx.query(
          `SELECT id, content_key FROM generations WHERE content_key IS NOT NULL AND (deleted_at IS NOT NULL OR status = 'refunded') LIMIT 100`);
        for (const { id, content_key } of purge.rows) {
          await this.storage.delete(content_key);
          await tx.query('UPDATE generations SET content_key = NULL WHERE id = $1 AND content_key = $2', [id, content_key]);
        }
      });
      await this.db.query(
        `DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_keys
           WHERE created_at < now() - make_interval(hours => $1) LIMIT 5000))`, [IDEMPOTENCY_KEEP_HOURS]);
      // Request counts of windows that ended over an hour ago (rate-limits.ts: windows are minutes since the epoch).
      await this.db.query('DELETE FROM rate_windows WHERE window_start < $1', [Math.floor(Date.now() / 60_000) - 60]);
    } catch (e) {
      this.log.warn({ err: e }, 'housekeeping sweep failed; will retry');
    }
  }
}
