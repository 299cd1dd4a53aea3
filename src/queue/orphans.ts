// Stored files no row names: the output of an attempt killed between its upload and the UPDATE that
// records it, whose render then ended another way (refunded at its deadline, or finished by a later
// attempt that never learnt of it), and an upload whose row was never written. They are removed once
// older than ORPHAN_MIN_AGE_MS, without racing a render that is still storing: a file of a queued
// render's current attempt is left alone (that attempt may still record it). Any other attempt's file
// can never be recorded, because every statement of an attempt is fenced by its lease (db/lease.ts).
// A test output shared by many test renders (queue/test-stored.ts) is removed here only, once no row
// names it: a process names one only within half of ORPHAN_MIN_AGE_MS of its own last put of it.
// A video's poster (queue/poster.ts) is removed once no row names the video it was taken from.
import { unlessBackingUp } from '../db/backup-lock.ts';
import type { Db } from '../db/pool.ts';
import { keyOwners } from '../db/stored-files.ts';
import type { Storage } from '../storage/storage.ts';
import { SHARED_TEST_KEY, SHARED_TEST_PREFIX } from './test-stored.ts';
import { LEASE_SECONDS } from './worker.ts';
import { posterOutputKeys, posterOwner } from '../storage/output-keys.ts';

const POSTERS = 'posters/';

/**
 * Four leases: an attempt's file is recorded right after its upload, and an attempt whose worker stalls
 * longer than its lease is superseded; an upload's row is written right after its file.
 */
export const ORPHAN_MIN_AGE_MS = 4 * LEASE_SECONDS * 1000;
const BATCH = 500;
const OUTPUT_KEY = /^generations\/(gen_[0-9a-f]{32})-(\d+)\.[a-z0-9]+$/;
const UPLOAD_KEY = /^uploads\/upl_[0-9a-f]{32}$/;

/** Removes up to BATCH orphans per prefix; the keys removed. */
export async function removeOrphans(
  db: Db,
  storage: Storage,
  minAgeMs = ORPHAN_MIN_AGE_MS,
): Promise<string[]> {
  const removed: string[] = [];
  for (const prefix of ['generations/', 'uploads/', SHARED_TEST_PREFIX, POSTERS]) {
    // A shared test output's age is what keeps a batch about to name it safe: never less.
    const cutoff =
      Date.now() -
      (prefix === SHARED_TEST_PREFIX ? Math.max(minAgeMs, ORPHAN_MIN_AGE_MS) : minAgeMs);
    const old: string[] = [];
    for await (const o of storage.list(prefix)) {
      // Keys of another shape are not ours to judge (a later release's, an operator's): left alone.
      if (
        o.modifiedAt.getTime() < cutoff &&
        ([OUTPUT_KEY, UPLOAD_KEY, SHARED_TEST_KEY].some((k) => k.test(o.key)) ||
          posterOwner(o.key) !== null)
      )
        old.push(o.key);
      if (old.length >= BATCH) break;
    }
    if (old.length === 0) continue;
    // Not while a backup copies files (db/backup-lock.ts); a later sweep does it.
    await unlessBackingUp(db, async (tx) => {
      const ids = old
        .map((k) => OUTPUT_KEY.exec(k)?.[1] ?? posterOwner(k)?.generationId)
        .filter((id): id is string => id !== undefined);
      // A poster goes with its video: kept while a row names the video it was taken from.
      const outputsOf = (key: string) => {
        const p = posterOwner(key);
        return p ? posterOutputKeys(p.generationId, p.attempt) : [key];
      };
      const owners = await keyOwners(tx, old.flatMap(outputsOf), ids);
      for (const key of old) {
        if (outputsOf(key).some((k) => owners.named.has(k))) continue;
        const m = OUTPUT_KEY.exec(key);
        if (m && owners.queuedAttempts.get(m[1]) === Number(m[2])) continue; // may still be recorded
        const p = posterOwner(key);
        if (p && owners.queuedAttempts.get(p.generationId) === p.attempt) continue;
        await storage.delete(key);
        removed.push(key);
      }
    });
  }
  return removed;
}
