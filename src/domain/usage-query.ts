// The query of GET /v1/usage (docs/api.md "Usage"): a range of whole days in the day's time zone and
// the dimensions to group by. Pure: the caller gives today's date, so the defaults are testable.
import { invalidInput, type FieldProblem } from './errors.ts';

export const USAGE_GROUPS = ['day', 'model', 'key', 'member'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** The longest range one request may cover, in days, both ends counted. */
export const MAX_USAGE_DAYS = 366;
/** The range when none is given: the last 30 days, today included. */
export const DEFAULT_USAGE_DAYS = 30;

export interface UsageQuery {
  /** First day, YYYY-MM-DD, inclusive. */
  from: string;
  /** Last day, YYYY-MM-DD, inclusive. */
  to: string;
  /** In the order given; empty: one row with the totals of the range. */
  groupBy: UsageGroup[];
}

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since the Unix epoch of a calendar date, or undefined when it is not one (2026-02-30). */
function dayNumber(s: string): number | undefined {
  const m = DATE.exec(s);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  // Date.UTC rolls 2026-02-30 over to March: a date that does not come back unchanged is not one.
  if (y < 1 || back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1) return undefined;
  if (back.getUTCDate() !== d) return undefined;
  return t / DAY_MS;
}

const dateOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** Today's date (YYYY-MM-DD) in an IANA time zone. */
export function todayIn(timeZone: string, now = new Date()): string {
  // en-CA formats a date as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
}

/**
 * The query from its raw parameters (each a string given once, or absent), or a 400 INVALID_INPUT
 * naming every bad one. Defaults: `to` today, `from` 29 days before `to`, no grouping.
 */
export function parseUsageQuery(
  raw: { from?: string; to?: string; groupBy?: string },
  today: string,
): UsageQuery {
  const problems: FieldProblem[] = [];
  const date = (field: 'from' | 'to', v: string | undefined) => {
    if (v === undefined) return undefined;
    const n = dayNumber(v);
    if (n === undefined)
      problems.push({ field, message: 'must be a calendar date written YYYY-MM-DD' });
    return n ?? null;
  };
  const from = date('from', raw.from);
  const to = date('to', raw.to);
  const groupBy = parseGroups(raw.groupBy, problems);
  if (from === null || to === null || problems.length) throw invalidInput(problems);
  const last = to ?? dayNumber(today)!;
  const first = from ?? last - (DEFAULT_USAGE_DAYS - 1);
  if (first > last)
    problems.push({ field: 'from', message: `must not be after to (${dateOf(last)})` });
  else if (last - first + 1 > MAX_USAGE_DAYS)
    problems.push({
      field: 'from',
      message: `the range from ${dateOf(first)} to ${dateOf(last)} is ${last - first + 1} days; at most ${MAX_USAGE_DAYS}`,
    });
  if (problems.length) throw invalidInput(problems);
  return { from: dateOf(first), to: dateOf(last), groupBy };
}

function parseGroups(raw: string | undefined, problems: FieldProblem[]): UsageGroup[] {
  if (raw === undefined) return [];
  const groups: UsageGroup[] = [];
  const names = raw.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!(USAGE_GROUPS as readonly string[]).includes(name)) {
      problems.push({
        field: 'groupBy',
        message: `${JSON.stringify(name.slice(0, 40))} is not one of ${USAGE_GROUPS.join(', ')} (comma separated)`,
      });
      return groups;
    }
    if (groups.includes(name as UsageGroup)) {
      problems.push({ field: 'groupBy', message: `${name} is given twice` });
      return groups;
    }
    groups.push(name as UsageGroup);
  }
  return groups;
}
