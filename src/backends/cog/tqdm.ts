// Progress from a Cog prediction's `logs`: Cog models print tqdm bars, which Cog passes on as text
// (Cog has no structured progress: only tqdm lines in the logs). tqdm's default format is
// `{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]`, each
// update ending in `\r` on a terminal or `\n` in a log. The last line with a bar gives the fraction:
// its `N%|` when it has one, else its `n/total [`.
const PERCENT = /(\d{1,3}(?:\.\d+)?)%\|/;
const COUNT = /(?:^|[\s|])(\d+)\/(\d+)\s*(?:\[|$)/;

/** The fraction 0..1 the latest tqdm line of `logs` shows; undefined when none shows one. */
export function tqdmProgress(logs: unknown): number | undefined {
  if (typeof logs !== 'string' || logs === '') return undefined;
  // Only the tail matters, and logs can be long: look at the last 4 KiB.
  const lines = logs.slice(-4096).split(/[\r\n]+/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const pct = PERCENT.exec(lines[i]);
    if (pct) return Math.min(1, Number(pct[1]) / 100);
    const count = COUNT.exec(lines[i]);
    if (count && Number(count[2]) > 0) return Math.min(1, Number(count[1]) / Number(count[2]));
  }
  return undefined;
}
