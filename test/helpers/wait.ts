// The one way a test waits: poll a probe until it proves what the test waits for. Never a fixed
// sleep: to show that something did NOT happen, wait for a later event that would have come after
// it (a fake server's request log, a second render, a delivery to another endpoint), then assert
// the absence. Helpers that wait for something of their own (queueDrained, waitFinal, the clock's
// next minute) are built on this one. The timers left in test/ are not waits: the time under test
// (a revocation within 1 s, a cache entry expiring), the pace of a load or flood, and delays a fake
// server plays.

export interface WaitOptions {
  /** Give up after this long (generous: the machine may be loaded). Default 60 s. */
  timeoutMs?: number;
  /** Pause between probes. Default 20 ms; 0 probes again as soon as the last probe is done. */
  intervalMs?: number;
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Calls `probe` until it returns a truthy value, and returns that value. A probe that throws (an
 * `expect` not yet met, a server not yet listening) counts as "not yet"; on timeout the error names
 * `what` and carries the last value or error the probe gave.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  o: WaitOptions = {},
): Promise<Truthy<Awaited<T>>> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const intervalMs = o.intervalMs ?? 20;
  const end = Date.now() + timeoutMs;
  let last: { value?: unknown; error?: unknown } = {};
  for (;;) {
    try {
      const v = await probe();
      if (v) return v as Truthy<Awaited<T>>;
      last = { value: v };
    } catch (e) {
      last = { error: e };
    }
    if (Date.now() > end) {
      const why =
        'error' in last
          ? `last error: ${(last.error as Error)?.message ?? String(last.error)}`
          : `last value: ${String(last.value)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${why})`, {
        cause: last.error,
      });
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
