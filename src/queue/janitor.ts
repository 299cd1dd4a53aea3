// Periodic housekeeping, safe to run in every worker process at once (each step is guarded):
// renders stuck past their deadline end failed and refunded; files of deleted or refunded renders are
// removed; files of succeeded renders past their expires_at, and uploads expired or deleted, are removed
// (each once, on whichever node locks it first); idempotency records older than 25 h (docs/api.md
// promises at least 24 h; the hour more is margin) and stale rate-limit windows and webhook deliveries
// finished over 30 days ago are pruned.
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

  /** Removes the files of succeeded renders past their expires_at; content then answers 410. */
  async expireOutputs(): Promise<number> {
    let removed = 0;
    // Not while a backup copies the files its snapshot names (db/backup-lock.ts); a later sweep does it.
    await unlessBackingUp(this.db, async (tx) => {
      const { rows } = await tx.query(
        `SELECT id, content_key FROM generations WHERE expires_at < now() AND content_removed_at IS NULL AND content_key IS NOT NULL
         ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED`);
      for (const r of rows) await this.storage.delete(r.content_key);
      if (rows.length > 0) await tx.query('UPDATE generations SET content_removed_at = now() WHERE id = ANY ($1)', [rows.map((r) => r.id)]);
      removed = rows.length;
    });
    return removed;
  }

  /** Removes expired and deleted uploads, file first, then the row. */
  async removeUploads(): Promise<number> {
    let removed = 0;
    await unlessBackingUp(this.db, async (tx) => {
      const { rows } = await tx.query(
        `SELECT id, storage_key FROM uploads WHERE expires_at < now() OR deleted_at IS NOT NULL LIMIT 100 FOR UPDATE SKIP LOCKED`);
      for (const r of rows) await this.storage.delete(r.storage_key);
      if (rows.length > 0) await tx.query('DELETE FROM uploads WHERE id = ANY ($1)', [rows.map((r) => r.id)]);
      removed = rows.length;
    });
    return removed;
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
      await this.expireOutputs();
      await this.removeUploads();
      // Finished webhook deliveries are kept 30 days for the deliveries list, then pruned.
      await this.db.query(
        `DELETE FROM webhook_deliveries WHERE ctid = ANY(ARRAY(SELECT ctid FROM webhook_deliveries
           WHERE status <> 'pending' AND created_at < now() - interval '30 days' LIMIT 5000))`);
      await this.db.query(
        `DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_keys
           WHERE created_at < now() - make_interval(hours => $1) LIMIT 5000))`, [IDEMPOTENCY_KEEP_HOURS]);
      // Request counts of windows that ended over an hour ago (rate-limits.ts: windows are minutes since the epoch),
      // folded into each key's last use (shown in the studio) as they go.
      await this.db.query(`WITH gone AS (DELETE FROM rate_windows WHERE window_start < $1 RETURNING key_id, window_start)
        UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, to_timestamp(g.m * 60))
        FROM (SELECT key_id, max(window_start) AS m FROM gone GROUP BY key_id) g WHERE k.id = g.key_id`, [Math.floor(Date.now() / 60_000) - 60]);
    } catch (e) {
      this.log.warn({ err: e }, 'housekeeping sweep failed; will retry');
    }
  }
}
