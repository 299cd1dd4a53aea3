// The request bodies an account's keys send (docs/account-limits.md "Request bodies"). Parsing JSON costs
// the server up to about 13 ns a byte (a MiB of small objects: 13 ms of CPU; bench/whatif/json-cost.ts),
// so an account at the rate limit its owner may choose (6,000 a minute) sending bodies at the body limit
// (1 MiB) would take more than a core. Bodies over FREE_BYTES count against a budget per account of
// RENDERGATE_BODY_BYTES_PER_SECOND, of which an account that has been quiet may spend `burstBytes` at
// once (four bodies at the limit, app.ts). A body goes when its account is not behind its budget, and its bytes are owed by the bodies
// after it: a body is never refused for its size alone (the body limit does that), only the ones
// behind a large one wait; those are refused at once with 429 and the seconds until the account is
// clear. Small bodies, almost every request, never count. Per process, in memory; at most MAX_ACCOUNTS
// accounts remembered (the least recently seen go first).
import { ApiError } from '../domain/errors.ts';
import { setRecent } from './recent-map.ts';

/** Bodies up to this many bytes never count (a quote or a create with its inputs is a few hundred). */
export const FREE_BYTES = 16 * 1024;
const MAX_ACCOUNTS = 10_000;

export class BodyBudget {
  /** Per account: when it is clear of the bytes it sent, ms (at most `burstBytes` behind now). */
  private clearAt = new Map<string, number>();

  constructor(
    private bytesPerSecond: number,
    private burstBytes: number,
    private maxAccounts = MAX_ACCOUNTS,
  ) {}

  /**
   * Books a body of `bytes` for the account; the 429 when the account is still behind its budget,
   * with the seconds until it is clear.
   */
  take(accountId: string, bytes: number, nowMs = Date.now()): ApiError | undefined {
    if (bytes <= FREE_BYTES) return undefined;
    const msPerByte = 1000 / this.bytesPerSecond;
    const from = Math.max(this.clearAt.get(accountId) ?? 0, nowMs - this.burstBytes * msPerByte);
    if (from > nowMs) {
      const retry = Math.max(1, Math.ceil((from - nowMs) / 1000));
      const perSecond = `${Math.round((this.bytesPerSecond / 1024 / 1024) * 10) / 10} MiB`;
      return new ApiError(
        'RATE_LIMITED',
        `This account's request bodies come faster than ${perSecond} a second; retry after ${retry} s.`,
        undefined,
        { 'retry-after': String(retry) },
      );
    }
    setRecent(this.clearAt, accountId, from + bytes * msPerByte, this.maxAccounts);
    return undefined;
  }
}
