// Small statistics helpers: exact percentiles over recorded samples (nearest rank), medians.

/** The q-th percentile (0..100) of `samples` by nearest rank; null when there are none. */
export function percentile(samples: ArrayLike<number>, q: number): number | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((q / 100) * sorted.length)));
  return sorted[rank - 1];
}

export function median(samples: ArrayLike<number>): number | null {
  return percentile(samples, 50);
}

/** Rounds for display and for the JSON line: 3 significant decimals are more than the noise allows. */
export function round(n: number | null | undefined, digits = 2): number | null {
  if (n === null || n === undefined || !Number.isFinite(n)) return null;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
