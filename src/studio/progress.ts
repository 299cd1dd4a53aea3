// A running render's progress for people: a bar's value and the time left. The time left comes from
// the backend's own rate when it reports progress (the time so far over the fraction done), else
// from how long the account's latest renders of the model took (History.typicalSeconds), else none.
// A render waiting for a worker has no bar: its place in the queue says more.

export interface ProgressView {
  /** 0-100 for the bar; null when nothing says how far the render is. */
  percent: number | null;
  /** "27 % · about 8 s left", "Started · about 1 min left", "Waiting · 3rd in the queue". */
  text: string;
}

/** Progress below this says too little of the rate to extrapolate from. */
const MIN_FRACTION = 0.03;

/** "about 8 s left", "about 2 min left", "almost done". */
export function timeLeft(seconds: number): string {
  if (seconds < 2) return 'almost done';
  if (seconds < 90) return `about ${Math.round(seconds)} s left`;
  return `about ${Math.round(seconds / 60)} min left`;
}

export function progressView(
  g: {
    status?: unknown;
    startedAt?: unknown;
    progress?: unknown;
    queuePosition?: unknown;
  },
  typicalSeconds: number | null,
  now = Date.now(),
): ProgressView | null {
  if (g.status !== 'queued') return null;
  if (typeof g.startedAt !== 'string') {
    const pos =
      typeof g.queuePosition === 'number' ? ` · position ${g.queuePosition} in queue` : '';
    return { percent: null, text: `Waiting for a worker${pos}` };
  }
  const elapsed = Math.max(0, (now - Date.parse(g.startedAt)) / 1000);
  const p = typeof g.progress === 'number' ? Math.min(1, Math.max(0, g.progress)) : null;
  if (p !== null && p >= MIN_FRACTION) {
    const pct = Math.round(p * 100);
    const left = p >= 1 ? 'finishing' : timeLeft((elapsed * (1 - p)) / p);
    return { percent: pct, text: `${pct} % · ${left}` };
  }
  if (typicalSeconds !== null && typicalSeconds > 0) {
    // No rate yet: the bar follows the typical time, stopping short of the end until it is done.
    const pct = Math.round(Math.min(0.95, elapsed / typicalSeconds) * 100);
    const left =
      elapsed < typicalSeconds ? timeLeft(typicalSeconds - elapsed) : 'taking longer than usual';
    return { percent: pct, text: `Running · ${left} (by past renders)` };
  }
  // Nothing to say beyond the row's own "Running".
  return p === null ? null : { percent: Math.round(p * 100), text: `${Math.round(p * 100)} %` };
}
