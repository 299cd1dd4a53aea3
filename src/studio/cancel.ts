// Cancel (CONTRACT.md "Cancel") for the studio until Generations.cancel exists on main: a queued render
// (waiting or running) becomes `refunded` with its charge returned and the running attempt told to stop;
// unlike delete, the record stays. A refunded one is left as it is; a succeeded or failed one is refused.
// TODO(issue 12): replace with Generations.cancel once the uploads/cancel work is merged.
import { transaction, type Db } from '../db/pool.ts';
import { refundGeneration } from '../db/refunds.ts';
import { CANCEL_CHANNEL } from '../db/channels.ts';
import { ApiError } from '../domain/errors.ts';
import { isId } from '../domain/ids.ts';

export async function cancelGeneration(db: Db, accountId: string, id: string): Promise<void> {
  if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
  await transaction(db, async (tx) => {
    const { rows } = await tx.query('SELECT status FROM generations WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE', [id, accountId]);
    if (!rows[0]) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    if (rows[0].status === 'refunded') return;
    if (rows[0].status !== 'queued') throw new ApiError('INVALID_INPUT', `A ${rows[0].status} render cannot be cancelled.`);
    await refundGeneration(tx, id, 'queued', { status: 'refunded', code: 'CANCELLED', message: 'The render was cancelled by its owner.' });
    await tx.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, id]);
  });
}
