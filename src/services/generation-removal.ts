// Ending renders: cancel and DELETE (a queued one is refunded in the same guarded transition), the
// operator's refund of a succeeded one, and removing a file no longer served.
import type { Config } from '../config.ts';
import { transaction, type Db, type Tx } from '../db/pool.ts';
import {
  accountOfGeneration,
  forgetContent,
  generationRow,
  lockOwnGeneration,
  markGenerationDeleted,
} from '../db/generations.ts';
import { notify, CANCEL_CHANNEL } from '../db/channels.ts';
import { shareAccount } from '../db/accounts.ts';
import { unlessBackingUp } from '../db/backup-lock.ts';
import { ApiError } from '../domain/errors.ts';
import { isId } from '../domain/ids.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Storage } from '../storage/storage.ts';
import { isSharedTestOutput } from '../queue/test-stored.ts';
import { generationView, type GenerationRow } from './generation-view.ts';
import type { KeyMode } from './keys.ts';
import { accountFor, authorize } from '../domain/authorize.ts';
import { modeOf, type Principal } from '../domain/principal.ts';
import type { GenerationCache } from './generation-cache.ts';
import type { Ledger } from '../ledger/ledger.ts';

export interface GenerationRemovalOptions {
  db: Db;
  config: Config;
  storage: Storage;
  /** Refunds (the ledger's). */
  ledger: Ledger;
  metrics?: Metrics;
  /** Polls answered from memory: a changed generation's copy is dropped. */
  cache?: GenerationCache;
}

export class GenerationRemoval {
  constructor(private o: GenerationRemovalOptions) {}

  /**
   * Cancels a render (docs/api.md "Cancel"): a queued one, waiting or running, becomes refunded with its
   * charge returned, in the same guarded transition DELETE uses, and whichever worker runs it is told to
   * stop. A refunded one is answered unchanged; a succeeded or failed one is 409.
   */
  async cancel(p: Principal, id: string): Promise<Record<string, unknown>> {
    const accountId = accountFor(p, 'renders.cancel');
    const mode = modeOf(p);
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    const { row, refunded } = await transaction(this.o.db, async (tx) => {
      const { status, refunded: cents } = await this.cancelLocked(tx, accountId, id, mode);
      if (status === 'succeeded' || status === 'failed') {
        throw new ApiError(
          'GENERATION_NOT_CANCELLABLE',
          `Only a queued render can be cancelled; this one is ${status}.`,
          [{ status }],
        );
      }
      return { row: (await generationRow(tx, id)) as GenerationRow, refunded: cents };
    });
    this.o.cache?.invalidate(id);
    if (refunded) this.o.metrics?.refundedCents.inc(refunded);
    return generationView(row, this.o.config.publicUrl);
  }

  /**
   * Cancel and DELETE share this: under the row's lock, a queued render becomes refunded with its charge
   * returned (one guarded transition; the money moves once) and the worker running it, on any node, is
   * told to stop. Returns the row's status before, its file key, and the cents returned (null: none).
   */
  private async cancelLocked(
    tx: Tx,
    accountId: string,
    id: string,
    mode: KeyMode,
  ): Promise<{ status: string; contentKey: string | null; refunded: number | null }> {
    const row = await lockOwnGeneration(tx, accountId, id, mode);
    if (!row) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    let refunded: number | null = null;
    if (row.status === 'queued') {
      refunded = await this.o.ledger.refundIn(tx, id, 'queued', {
        status: 'refunded',
        code: 'CANCELLED',
        message: 'The render was cancelled by its owner.',
      });
      await notify(tx, CANCEL_CHANNEL, id);
    }
    return { status: row.status, contentKey: row.content_key, refunded };
  }

  /** Deletes a render; a queued (waiting or running) one is cancelled and refunded in the same step. */
  async delete(p: Principal, id: string) {
    const accountId = accountFor(p, 'renders.delete');
    const mode = modeOf(p);
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    const { contentKey, refunded } = await transaction(this.o.db, async (tx) => {
      // The second UPDATE of the row below re-checks its foreign keys, locking the account FOR KEY
      // SHARE; a test render's refund locks no account, so that would come after its key's day row,
      // against the order of a create batch (accounts, then days): taken first instead.
      if (mode === 'test') await shareAccount(tx, accountId);
      const was = await this.cancelLocked(tx, accountId, id, mode);
      await markGenerationDeleted(tx, id);
      return was;
    });
    this.o.cache?.invalidate(id);
    if (refunded) this.o.metrics?.refundedCents.inc(refunded);
    if (contentKey) await this.purgeContent(id, contentKey);
    return { id, deleted: true };
  }

  /** Removes a file no longer served; the janitor retries whatever a crash or a running backup left behind. */
  async purgeContent(id: string, key: string) {
    await unlessBackingUp(this.o.db, async (tx) => {
      // A test output other rows may name too is the orphan sweep's to remove (queue/test-stored.ts).
      if (!isSharedTestOutput(key)) await this.o.storage.delete(key);
      await forgetContent(tx, id, key);
    });
    this.o.cache?.invalidate(id);
  }

  /** The operator's refund of a succeeded render. */
  async adminRefund(p: Principal, id: string) {
    authorize(p, 'renders.refund');
    const row = await transaction(this.o.db, async (tx) => {
      const ok = await this.o.ledger.refundIn(tx, id, 'succeeded', {
        status: 'refunded',
        code: 'REFUNDED_BY_OPERATOR',
        message: 'The charge was returned by the operator.',
      });
      const row = await generationRow(tx, id);
      if (!row || row.deleted_at) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
      if (ok === null) {
        throw new ApiError(
          'GENERATION_NOT_REFUNDABLE',
          `Only a succeeded render can be refunded; this one is ${row.status as string}.`,
        );
      }
      this.o.metrics?.refundedCents.inc(ok);
      return row as GenerationRow;
    });
    this.o.cache?.invalidate(id);
    if (row.content_key) await this.purgeContent(id, row.content_key).catch(() => undefined);
    return generationView({ ...row, content_key: null }, this.o.config.publicUrl);
  }

  /** The account of a generation, deleted or not (the operator's console); null when there is none. */
  async accountOf(p: Principal, id: string): Promise<string | null> {
    authorize(p, 'accounts.administer');
    return isId('gen', id) ? accountOfGeneration(this.o.db, id) : null;
  }
}
