// One row of results, the table, and the final JSON line.

export interface Result {
  scenario: string;
  variant: string;
  /** Connections, a request rate ("200/s") or another load description. */
  concurrency: number | string;
  rps: number | null;
  /** Latency in ms (for render: median wall time of the path; for growth: at that size). */
  p50: number | null;
  p99: number | null;
  baseline: {
    name: string;
    rps?: number | null;
    p50?: number | null;
    p99?: number | null;
    ms?: number | null;
    mb?: number | null;
  } | null;
  ratio: number | null;
  target: string;
  pass: boolean | null;
  /** Why the figures are missing or suspect. */
  note?: string;
  extra?: Record<string, unknown>;
}

const fmtNum = (n: number | null | undefined, d = 1) =>
  n === null || n === undefined ? '-' : n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(d);

function baselineText(r: Result): string {
  const b = r.baseline;
  if (!b) return '-';
  if (b.rps !== undefined) return `${fmtNum(b.rps, 0)}/s`;
  if (b.ms !== undefined) return `${fmtNum(b.ms, 0)} ms`;
  if (b.mb !== undefined) return `${fmtNum(b.mb, 0)} MB`;
  if (b.p50 !== undefined) return `p50 ${fmtNum(b.p50, 2)}`;
  return '-';
}

export function table(results: Result[]): string {
  const head = [
    'scenario',
    'variant',
    'conc',
    'rps',
    'p50 ms',
    'p99 ms',
    'baseline',
    'ratio',
    'target',
    'result',
  ];
  const rows = results.map((r) => [
    r.scenario,
    r.variant,
    String(r.concurrency),
    fmtNum(r.rps, 0),
    fmtNum(r.p50, 2),
    fmtNum(r.p99, 2),
    r.baseline ? `${r.baseline.name} ${baselineText(r)}` : '-',
    r.ratio === null ? '-' : r.ratio.toFixed(2),
    r.target,
    (r.pass === null ? 'info' : r.pass ? 'pass' : 'MISS') + (r.note ? ` (${r.note})` : ''),
  ]);
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (i === 9 ? 0 : row[i].length))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 9 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
