// Rate limits count requests in windows aligned to the clock's minutes (src/admission/rate-limits.ts). A
// test that sends a few requests and expects the limit to be reached must not straddle a minute's end,
// where the count starts again: it waits for the next minute when too little of this one is left.
export async function awayFromMinuteEdge(needMs = 15_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 100));
}
