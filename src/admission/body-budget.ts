// The request bodies an account's keys send (docs/account-limits.md "Request bodies"). Parsing
// JSON costs the server up to about 13 ns a byte (a MiB of small objects: 13 ms of CPU;
// bench/whatif/json-cost.ts), so an account at the rate limit its owner may choose (6,000 a
// minute) sending bodies at the body limit (1 MiB) would take more than a core. Bodies over
// FREE_BYTES count against a budget per account of RENDERGATE_BODY_BYTES_PER_SECOND, of which an
// account that has been quiet may spend `burstBytes` at once (four bodies at the limit, app.ts). A
// body goes when its account is not behind its budget, and its bytes are owed by the bodies after
// it: a body is never refused for its size alone (the body limit does that), only the ones behind
// a large one; those are refused at once with 429 and the seconds until the account is clear.
// Small bodies, almost every request, never count.
//
// One budget per account across every API process (shared-pace.ts: a schedule in PostgreSQL,
// leased a quarter of the burst at most at a time), so N processes do not give an account N
// budgets.
import type { Db } from '../db/pool.ts';
import { ApiError } from '../domain/errors.ts';
import { SharedPace, type Booking } from './shared-pace.ts';

/** Bodies up to this many bytes never count (a quote or a create with its inputs is a few hundred). */
export const FREE_BYTES = 16 * 1024;
const MAX_ACCOUNTS = 10_000;

export class BodyBudget {
  private pace: SharedPace;

  constructor(
    db: Db,
    private bytesPerSecond: number,
    burstBytes: number,
    maxAccounts = MAX_ACCOUNTS,
  ) {
    const msPerByte = 1000 / bytesPerSecond;
    this.pace = new SharedPace(db, {
      name: 'bodies',
      msPerUnit: msPerByte,
      spanMs: burstBytes * msPerByte,
      maxWaitMs: 0,
      maxWaiting: 0,
      maxLeaseMs: (burstBytes * msPerByte) / 4,
      maxSubjects: maxAccounts,
    });
  }

  /**
   * Books a body of `bytes` for the account; the 429 when the account is still behind its budget,
   * with the seconds until it is clear. Synchronous unless the account's lease in this process
   * does not cover it (and always for bodies of at most FREE_BYTES).
   */
  take(
    accountId: string,
    bytes: number,
    nowMs = Date.now(),
  ): ApiError | undefined | Promise<ApiError | undefined> {
    if (bytes <= FREE_BYTES) return undefined;
    const b = this.pace.book(accountId, bytes, nowMs);
    return b instanceof Promise ? b.then((x) => this.answer(x)) : this.answer(b);
  }

  private answer(b: Booking): ApiError | undefined {
    if (!('refusedMs' in b)) return undefined;
    const retry = Math.max(1, Math.ceil(b.refusedMs / 1000));
    const perSecond = `${Math.round((this.bytesPerSecond / 1024 / 1024) * 10) / 10} MiB`;
    return new ApiError(
      'RATE_LIMITED',
      `This account's request bodies come faster than ${perSecond} a second; retry after ${retry} s.`,
      undefined,
      { 'retry-after': String(retry) },
    );
  }
}

/**
 * The bytes a request's body counts against its account's budget: its declared length, or the body
 * limit `limit` when it comes chunked (its length unknown until it is read). Uploads' images count
 * in their own turns (upload-turns.ts), not here.
 */
export function countedBodyBytes(
  h: Record<string, string | string[] | undefined>,
  limit: number,
): number {
  if (h['content-length'] === undefined && h['transfer-encoding'] === undefined) return 0;
  const type = h['content-type'];
  if (typeof type === 'string' && type.trimStart().toLowerCase().startsWith('image/')) return 0;
  const n = Number(h['content-length']);
  return n > 0 ? n : h['transfer-encoding'] !== undefined ? limit : 0;
}
