// Wall-clock time with sub-millisecond resolution, aligned to the system clock (the clock PostgreSQL
// stamps commits with): wait for Date.now() to tick, and take that instant as an exact millisecond.
// Comparable across the processes of one machine to well under a millisecond.
const offset = (() => {
  const t0 = Date.now();
  let t = t0;
  while (t === t0) t = Date.now();
  return t - performance.now();
})();

export const wallNow = (): number => offset + performance.now();
