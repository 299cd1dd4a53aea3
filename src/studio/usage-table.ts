// The Usage chart's numbers as tables (docs/studio.md "Usage"). A range of up to two months is one
// table, a row per day with spend. A longer one (up to a year: 366 rows of 9 amounts, most of a
// page's bytes) is a table per month, each month's total per series, its heading a link to that
// month's days; the days of one month are shown, by default the range's last (the current one).
// Each table has a column for the series that spent in it only. Every amount of the chart is in
// one of them, summed from the same cents.
import type { UsageChart } from './usage-chart.ts';

/** Up to this many days, every day of the range is in one table. */
export const ONE_TABLE_DAYS = 62;

export interface TableRow {
  /** A day (YYYY-MM-DD) or, in the months' table, a month (YYYY-MM). */
  label: string;
  cells: number[];
  totalCents: number;
}

export interface SpendTable {
  /** The series (indices into the chart's) that have a column. */
  columns: number[];
  rows: TableRow[];
  /** Per column, then all of them. */
  totals: number[];
  totalCents: number;
}

export interface UsageTables {
  /** Null for a range of up to ONE_TABLE_DAYS days. */
  months: SpendTable | null;
  /** The month whose days are shown (YYYY-MM); null: the whole range. */
  month: string | null;
  days: SpendTable;
}

const daysIn = (from: string, to: string) =>
  (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;

function table(count: number, rows: TableRow[]): SpendTable {
  const sums = new Array<number>(count).fill(0);
  for (const r of rows) r.cells.forEach((v, s) => (sums[s] += v));
  const columns = sums.map((_, s) => s).filter((s) => rows.some((r) => r.cells[s] !== 0));
  return {
    columns,
    rows: rows.map((r) => ({ ...r, cells: columns.map((s) => r.cells[s]) })),
    totals: columns.map((s) => sums[s]),
    totalCents: rows.reduce((a, r) => a + r.totalCents, 0),
  };
}

/** The months of [from, to] (YYYY-MM), oldest first. */
export function monthsOf(from: string, to: string): string[] {
  const out: string[] = [];
  let [y, m] = [Number(from.slice(0, 4)), Number(from.slice(5, 7))];
  const last = to.slice(0, 7);
  for (;;) {
    const month = `${y}-${String(m).padStart(2, '0')}`;
    out.push(month);
    if (month >= last) return out;
    [y, m] = m === 12 ? [y + 1, 1] : [y, m + 1];
  }
}

/** The tables of `chart`, showing the days of `month` (YYYY-MM) when the range is paged. */
export function usageTables(chart: UsageChart, month: string | null): UsageTables {
  const count = chart.series.length;
  if (daysIn(chart.from, chart.to) <= ONE_TABLE_DAYS)
    return { months: null, month: null, days: table(count, chart.rows) };
  const months = monthsOf(chart.from, chart.to);
  const shown = month !== null && months.includes(month) ? month : months[months.length - 1];
  const byMonth = new Map(months.map((m) => [m, new Array<number>(count).fill(0)]));
  for (const r of chart.rows) {
    const sums = byMonth.get(r.label.slice(0, 7))!;
    r.cells.forEach((v, s) => (sums[s] += v));
  }
  const monthRows = [...byMonth]
    .map(([label, cells]) => ({ label, cells, totalCents: cells.reduce((a, b) => a + b, 0) }))
    .filter((r) => r.cells.some((v) => v !== 0));
  return {
    months: table(count, monthRows),
    month: shown,
    days: table(
      count,
      chart.rows.filter((r) => r.label.startsWith(shown)),
    ),
  };
}
