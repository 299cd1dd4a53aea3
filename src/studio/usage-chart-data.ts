// What the Usage page's chart is drawn from: the account's spend per day and model over the range
// (services/usage.ts, the range checked as GET /v1/usage checks it), or the range's problem (more than 366 days,
// from after to) as a sentence for the page, answered 400.
import { ApiError } from '../domain/errors.ts';
import type { Principal } from '../domain/principal.ts';
import type { StudioCtx } from './types.ts';
import { usageChart, type UsageChart } from './usage-chart.ts';

export async function chartFor(
  ctx: StudioCtx,
  p: Principal,
  from: string,
  to: string,
): Promise<{ chart: UsageChart | null; chartError: string | null }> {
  try {
    const spend = await ctx.usage.dailyByModel(p, { from, to });
    return { chart: usageChart(spend.models, spend.from, spend.to), chartError: null };
  } catch (e) {
    const problem = e instanceof ApiError && e.code === 'INVALID_INPUT' ? e.details?.[0] : null;
    if (!problem) throw e;
    const { field, message } = problem as { field: string; message: string };
    const what = field === 'from' ? 'From' : field === 'to' ? 'To' : field;
    return { chart: null, chartError: `${what}: ${message}. Choose a range of at most 366 days.` };
  }
}
