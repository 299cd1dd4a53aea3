// The Usage page's figures over its range: the chart's spend per day and model, and the spend per key
// and per model. Both sum every render of the range (a year of 20 models is 7,320 renders), which
// made the page cost PostgreSQL about 46 ms; yet between two visits they rarely change. They are kept
// here per account and range with the stamp they were made at (db/usage.ts spendStamp: the newest
// ledger entry, the newest render, the keys' names), read in three index probes on every visit: a
// charge, a refund, a new render or a renamed key makes a new stamp, and the figures are made again.
// So a page never shows figures older than its own request; each process keeps its own.
import { modeOf, type Principal } from '../domain/principal.ts';
import { chartFor } from './usage-chart-data.ts';
import type { StudioCtx } from './types.ts';

type Figures = Awaited<ReturnType<typeof made>>;

/** Ranges kept, the oldest made forgotten first. */
const KEPT = 500;
const kept = new Map<string, { stamp: string; figures: Figures }>();

async function made(ctx: StudioCtx, p: Principal, from: string, to: string) {
  const fromD = new Date(`${from}T00:00:00Z`);
  const toD = new Date(new Date(`${to}T00:00:00Z`).getTime() + 86_400_000);
  const [spend, chart] = await Promise.all([
    ctx.accounts.spend(p, fromD, toD),
    chartFor(ctx, p, from, to),
  ]);
  return { ...spend, ...chart };
}

/** The figures of `p`'s account over [from, to] (days), made again only when they may differ. */
export async function usageFigures(
  ctx: StudioCtx,
  p: Principal,
  from: string,
  to: string,
): Promise<Figures> {
  // the stamp's read also checks that p may see the account's usage
  const stamp = await ctx.usage.stamp(p);
  if (p.kind !== 'member' && p.kind !== 'key') return made(ctx, p, from, to);
  const key = `${p.account} ${modeOf(p)} ${from} ${to}`;
  const hit = kept.get(key);
  if (hit?.stamp === stamp) return hit.figures;
  const figures = await made(ctx, p, from, to);
  kept.delete(key);
  kept.set(key, { stamp, figures });
  if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  return figures;
}
