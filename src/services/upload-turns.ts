// Turns for accepted uploads (docs/account-limits.md "Uploads"): decoding and storing an image costs
// the server about 5 ms of CPU, so an account sending uploads back to back would take a core for as
// long as its quota lasts (a thousand uploads). Each account's uploads are decoded and stored at most
// RENDERGATE_UPLOADS_PER_SECOND a second, after a burst of as many: one past that waits for its turn,
// up to MAX_WAIT_MS, then is refused with 429 (paced like any refusal that keeps coming). At most
// MAX_WAITING of an account's uploads wait at once, since each holds its body in memory. Per process,
// in memory; at most MAX_ACCOUNTS accounts remembered (the least recently seen go first).
import { ApiError } from '../domain/errors.ts';

export const MAX_WAIT_MS = 2_000;
export const MAX_WAITING = 4;
const MAX_ACCOUNTS = 10_000;

export class UploadTurns {
  /** Per account: when its next turn is due at the earliest (ms), and its uploads waiting now. */
  private accounts = new Map<string, { next: number; waiting: number }>();

  constructor(
    private perSecond: number,
    private maxAccounts = MAX_ACCOUNTS,
  ) {}

  /** Milliseconds until the account's turn; throws the 429 when that is too long or too many wait. */
  private book(accountId: string, nowMs: number): number {
    const a = this.accounts.get(accountId) ?? { next: 0, waiting: 0 };
    const gap = 1000 / this.perSecond;
    // a burst of perSecond turns: the schedule never lags more than a second behind now
    const next = Math.max(a.next, nowMs - 1000 + gap);
    const wait = Math.max(0, next - nowMs);
    if (wait > MAX_WAIT_MS || (wait > 0 && a.waiting >= MAX_WAITING)) {
      const retry = Math.max(1, Math.ceil(wait / 1000));
      throw new ApiError(
        'RATE_LIMITED',
        `This account's uploads come faster than ${this.perSecond} a second; retry after ${retry} s.`,
        undefined,
        { 'retry-after': String(retry) },
      );
    }
    this.accounts.delete(accountId);
    this.accounts.set(accountId, { next: next + gap, waiting: a.waiting + (wait > 0 ? 1 : 0) });
    for (const k of this.accounts.keys()) {
      if (this.accounts.size <= this.maxAccounts) break;
      if (k !== accountId) this.accounts.delete(k);
    }
    return wait;
  }

  /** Resolves at the account's turn to decode and store an upload (at once within its burst). */
  async take(accountId: string, nowMs = Date.now()): Promise<void> {
    const wait = this.book(accountId, nowMs);
    if (wait === 0) return;
    await new Promise((r) => setTimeout(r, wait));
    const a = this.accounts.get(accountId);
    if (a) a.waiting = Math.max(0, a.waiting - 1);
  }
}
