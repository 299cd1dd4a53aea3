// Rate limits count requests in windows aligned to the clock's minutes
// (src/admission/rate-limits.ts). A test that sends a few requests and expects the limit to be
// reached must not straddle a minute's end, where the count starts again: it waits for the next
// minute when too little of this one is left.
import { waitFor } from './wait.ts';

const leftOfMinute = () => 60_000 - (Date.now() % 60_000);

export async function awayFromMinuteEdge(needMs = 15_000): Promise<void> {
  if (leftOfMinute() >= needMs) return;
  // The minute turns within needMs; the first check after it finds the whole next minute ahead.
  await waitFor('the next minute of the clock', () => leftOfMinute() >= needMs, {
    timeoutMs: needMs + 5_000,
    intervalMs: 100,
  });
}
