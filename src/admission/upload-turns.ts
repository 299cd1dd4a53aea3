// Turns for accepted uploads (docs/account-limits.md "Uploads"): decoding and storing an image
// costs the server CPU, about 7 ms for a small one and up to hundreds for a large one, so an
// account sending uploads back to back would take a core (or every core) for as long as its quota
// lasts, and again after each delete. Each account has RENDERGATE_UPLOADS_PER_SECOND turns a
// second (5: an account renders at most 4 at a time, so its renders cannot use more), after a
// burst of UPLOAD_BURST (20: a batch chosen at once goes without waiting). An upload takes one
// turn plus one for each TURN_MS its image's decode is estimated to take (from its header: pixels
// by format, decodeTurns), so a turn is at most about 7 ms of CPU whatever the image, and an
// account's uploads take at most about perSecond × 7 ms of CPU a second, 35 ms by default. An
// upload whose account has turns left, or owes less than MAX_WAIT_MS of them, goes at once or at
// its turn, and its own cost is owed by the uploads after it: a large image is never refused for
// its size, only the ones behind it wait. Past MAX_WAIT_MS, or with MAX_WAITING of an account's
// uploads waiting in this process (each holds its body in its memory), 429 (paced like any refusal
// that keeps coming).
//
// The turns are the account's across every API process (shared-pace.ts: one schedule in
// PostgreSQL, leased a quarter of the burst at most at a time), so N processes do not give an
// account N bursts.
import type { Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { SharedPace } from './shared-pace.ts';

export const MAX_WAIT_MS = 2_000;
export const MAX_WAITING = 4;
const MAX_ACCOUNTS = 10_000;
/**
 * The turns an account that has been quiet may take at once (or perSecond when that is more): a
 * batch of images chosen at once goes without waiting.
 */
export const UPLOAD_BURST = 20;
/**
 * The estimated decode CPU worth one more turn, ms: what a small upload costs the server in all,
 * its request, storing and decode (7.35 ms for a 120 KB PNG, bench/whatif/upload-cost.ts).
 */
export const TURN_MS = 7;
/**
 * Decode CPU per pixel by format, ns, as sharp decodes a whole image to its last pixel (rounded up
 * from 12-megapixel photos, bench/whatif/decode-cost.ts): WebP is the slowest by far.
 */
export const DECODE_NS_PER_PIXEL: Record<string, number> = { jpeg: 3, png: 12, webp: 25 };

/** The turns an upload of `pixels` in `format` takes: one, and one per TURN_MS of its estimated decode. */
export function decodeTurns(format: string, pixels: number): number {
  const ns = DECODE_NS_PER_PIXEL[format] ?? Math.max(...Object.values(DECODE_NS_PER_PIXEL));
  return 1 + (pixels * ns) / 1e6 / TURN_MS;
}

export class UploadTurns {
  private pace: SharedPace;

  constructor(
    db: Db,
    private perSecond: number,
    burst = perSecond,
    maxAccounts = MAX_ACCOUNTS,
  ) {
    const gap = 1000 / perSecond;
    this.pace = new SharedPace(db, {
      name: 'uploads',
      msPerUnit: gap,
      // a burst of `burst` turns: the schedule never lags more than burst - 1 turns behind now
      // (the turn at now is the burst's last)
      spanMs: (burst - 1) * gap,
      maxWaitMs: MAX_WAIT_MS,
      maxWaiting: MAX_WAITING,
      maxLeaseMs: Math.max(1, burst / 4) * gap,
      maxSubjects: maxAccounts,
    });
  }

  /**
   * Resolves at the account's turn to decode and store an upload of `cost` turns (decodeTurns): at
   * once within its burst. Throws the 429 when that turn is too far or too many of the account's
   * wait.
   */
  async take(accountId: string, cost = 1, nowMs = Date.now()): Promise<void> {
    const b = await this.pace.book(accountId, Math.max(1, cost), nowMs);
    if ('refusedMs' in b) {
      const retry = Math.max(1, Math.ceil(b.refusedMs / 1000));
      throw new ApiError(
        'RATE_LIMITED',
        `This account's uploads come faster than ${this.perSecond} a second; retry after ${retry} s.`,
        undefined,
        { 'retry-after': String(retry) },
      );
    }
    if (b.waitMs === 0) return;
    try {
      await new Promise((r) => setTimeout(r, b.waitMs));
    } finally {
      this.pace.waited(accountId);
    }
  }
}
