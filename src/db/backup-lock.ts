// A backup copies the stored files after it has taken its database snapshot, so a file the snapshot
// references must not be removed in between. Removals of stored files (the janitor's purge, the purge
// after a DELETE or a refund) run under a shared advisory lock they only *try* to take; a backup holds
// the same lock exclusively from before its snapshot until its last file is copied. While a backup
// runs, removals are skipped and the janitor retries them on a later sweep (the rows still name the
// files). Creating files needs no lock: a file is written before the row that names it commits.
import type pg from 'pg';
import { transaction, type Db, type Tx } from './pool.ts';

export const BACKUP_LOCK = 0x5247424b; // "RGBK"

/**
 * Runs `fn` in a transaction holding the shared lock, unless a backup is under way; false when it was
 * skipped. `fn` sends its statements through `tx`: one connection, so that many removals at once cannot
 * hold every connection of the pool while each waits for another.
 */
export async function unlessBackingUp(db: Db, fn: (tx: Tx) => Promise<void>): Promise<boolean> {
  return transaction(db, async (tx) => {
    const { rows } = await tx.query<{ got: boolean }>(
      'SELECT pg_try_advisory_xact_lock_shared($1) AS got',
      [BACKUP_LOCK],
    );
    if (!rows[0].got) return false;
    await fn(tx);
    return true;
  });
}

/** Waits until no removal of stored files is under way and blocks new ones, until the session ends or `releaseBackupLock`. */
export async function takeBackupLock(session: pg.ClientBase): Promise<void> {
  await session.query('SELECT pg_advisory_lock($1)', [BACKUP_LOCK]);
}

export async function releaseBackupLock(session: pg.ClientBase): Promise<void> {
  await session.query('SELECT pg_advisory_unlock($1)', [BACKUP_LOCK]);
}
