// The Usage page's spend section over its range: the chart of spend per day and model, its tables,
// and the spend per key and per model. Its figures sum every render of the range (a year of 20
// models is 7,320 renders), which made the page cost PostgreSQL about 46 ms, and its HTML is most
// of the page's bytes; yet between two visits they rarely change. Both are kept here per account
// and range (the HTML per month shown, too) with the stamp they were made at (db/usage.ts
// spendStamp: the newest ledger entry, the newest render, the keys' names), read in three index
// probes on every visit (with the page's other parts, in Usage.statement's one statement, on its
// first page): a charge, a refund, a new render or a renamed key makes a new stamp, and
// figures and HTML are made again. So a page never shows figures older than its own request; each
// process keeps its own.
import { modeOf, type Principal } from '../domain/principal.ts';
import { chartFor } from './usage-chart-data.ts';
import { usageTables } from './usage-table.ts';
import { partHtml } from './view.ts';
import type { StudioCtx } from './types.ts';

type Figures = Awaited<ReturnType<typeof made>>;

/** The spend section as HTML, and the range's problem (a 400) if it has one. */
export interface Spend {
  html: string;
  chartError: string | null;
}

/** Ranges kept, the oldest made forgotten first; months kept per range. */
const KEPT = 500;
const MONTHS_KEPT = 13;
const kept = new Map<string, { stamp: string; figures: Figures; html: Map<string, string> }>();

async function made(ctx: StudioCtx, p: Principal, from: string, to: string) {
  const fromD = new Date(`${from}T00:00:00Z`);
  const toD = new Date(new Date(`${to}T00:00:00Z`).getTime() + 86_400_000);
  const [spend, chart] = await Promise.all([
    ctx.accounts.spend(p, fromD, toD),
    chartFor(ctx, p, from, to),
  ]);
  return { ...spend, ...chart };
}

function written(figures: Figures, from: string, to: string, month: string | null): string {
  const tables = figures.chart ? usageTables(figures.chart, month) : null;
  return partHtml('usage-spend', { ...figures, tables, from, to });
}

/**
 * The spend section of `p`'s account over [from, to] (days), the days of `month` (YYYY-MM; null:
 * the range's last) in its table, made again only when it may differ: `stamp` is the account's
 * (Usage.statement's, else read here).
 */
export async function usageSpend(
  ctx: StudioCtx,
  p: Principal,
  from: string,
  to: string,
  month: string | null,
  known?: string,
): Promise<Spend> {
  // the stamp's read also checks that p may see the account's usage
  const stamp = known ?? (await ctx.usage.stamp(p));
  if (p.kind !== 'member' && p.kind !== 'key') {
    const figures = await made(ctx, p, from, to);
    return { html: written(figures, from, to, month), chartError: figures.chartError };
  }
  const key = `${p.account} ${modeOf(p)} ${from} ${to}`;
  let entry = kept.get(key);
  if (entry?.stamp !== stamp) {
    entry = { stamp, figures: await made(ctx, p, from, to), html: new Map() };
    kept.delete(key);
    kept.set(key, entry);
    if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  }
  const shown = month ?? '';
  let html = entry.html.get(shown);
  if (html === undefined) {
    html = written(entry.figures, from, to, month);
    if (entry.html.size >= MONTHS_KEPT) entry.html.delete(entry.html.keys().next().value!);
    entry.html.set(shown, html);
  }
  return { html, chartError: entry.figures.chartError };
}
