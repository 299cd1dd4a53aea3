// The Usage page's chart (docs/studio.md "Usage"): spend per day over the chosen range, stacked by
// model, drawn here as SVG shapes (no chart script: the page is whole as it arrives), with the same
// numbers as a table beside it. This module computes the geometry; the template
// (views/usage-chart.eta) writes it out, escaping every name. Beyond MAX_SERIES models the smallest
// are one "Other models" series, so that colours stay few enough to tell apart.
/** A model's spend: `spent[i]` on the day `days[i]` days after the range's first. */
export interface ModelDays {
  model: string;
  days: number[];
  spent: number[];
}

export const MAX_SERIES = 8;
// Colours with at least 3:1 against the page's white (WCAG 1.4.11), the last one for "Other".
const COLOURS = [
  '#1f5fa8',
  '#c4461b',
  '#2e7d32',
  '#7b3fa0',
  '#a3620a',
  '#00838f',
  '#ad1457',
  '#5f6368',
];

// The drawing's own units (viewBox); the page scales it to its width, down to a 360 px screen.
// Fine enough that every coordinate is a whole number: a year's 7,000 bars write no decimals.
const W = 1440;
const H = 520;
const LEFT = 144;
const RIGHT = 16;
const TOP = 20;
const BOTTOM = 60;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = H - TOP - BOTTOM;

export interface Series {
  label: string;
  colour: string;
  totalCents: number;
  /** The SVG path of its stack: from the axis up to its top (its own and the lower series'). */
  d: string;
  /** The models of "Other models"; empty for a single model. */
  models: string[];
}

export interface UsageChart {
  from: string;
  to: string;
  width: number;
  height: number;
  series: Series[];
  totalCents: number;
  /** The y axis: each tick's height in the drawing and its amount. */
  ticks: { y: number; cents: number }[];
  /** Dates under the x axis (first, middle, last). */
  dates: { x: number; day: string; anchor: 'start' | 'middle' | 'end' }[];
  /** The numbers: one row per day with spend (its date), a cell per series, the day's total. */
  rows: { label: string; cells: number[]; totalCents: number }[];
  /** The day that spent most, for the accessible name. */
  peak: { day: string; cents: number } | null;
  plot: { left: number; top: number; width: number; height: number };
}

const DAY_MS = 86_400_000;
const dayList = (from: string, to: string): string[] => {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
};

/** The smallest of 1, 2, 2.5, 5 × 10^k cents at or above `cents` (the axis' top). */
export function niceCeil(cents: number): number {
  if (cents <= 0) return 100;
  const step = 10 ** Math.floor(Math.log10(cents));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * step >= cents) return m * step;
  return 10 * step;
}

/** The chart of `models`' spend over the days from `from` to `to`. */
export function usageChart(models: ModelDays[], from: string, to: string): UsageChart {
  const days = dayList(from, to);
  // models by what they spent, largest first; past MAX_SERIES - 1 the rest are "Other models"
  const totals = models
    .map((m) => ({ m, total: m.spent.reduce((a, b) => a + b, 0) }))
    .sort((a, b) => b.total - a.total || (a.m.model < b.m.model ? -1 : 1));
  const own = totals.length > MAX_SERIES ? totals.slice(0, MAX_SERIES - 1) : totals;
  const rest = totals.slice(own.length);
  const count = own.length + (rest.length ? 1 : 0);
  // cents[series][day]
  const cents = Array.from({ length: count }, () => new Array<number>(days.length).fill(0));
  totals.forEach(({ m }, rank) => {
    const row = cents[Math.min(rank, count - 1)];
    for (let i = 0; i < m.days.length; i++)
      if (m.days[i] >= 0 && m.days[i] < days.length) row[m.days[i]] += m.spent[i];
  });
  const dayTotals = days.map((_, d) => cents.reduce((s, c) => s + Math.max(0, c[d]), 0));
  const peakCents = Math.max(0, ...dayTotals);
  const top = niceCeil(peakCents);
  const y = (c: number) => Math.round(TOP + PLOT_H - (c / top) * PLOT_H);
  const slot = PLOT_W / days.length;
  // each day's bar from its slot's rounded edges (no gap, no overlap), inset where bars are wide
  const inset = days.length <= 62 ? Math.round(slot * 0.1) : 0;
  const edge = days.map((_, i) => Math.round(LEFT + i * slot));
  edge.push(LEFT + PLOT_W);
  // Each series is one path: the outline of its stack's top from the axis, every day a step
  // (relative whole numbers, a few bytes a day). The template paints the highest stack first and
  // each lower one over it, so each model shows as its band, as a rectangle per day would.
  const upTo = new Array<number>(days.length).fill(0);
  const series: Series[] = cents.map((c, s) => {
    const pen = stepPen(LEFT, y(0));
    for (let i = 0; i < c.length; i++) {
      upTo[i] += Math.max(0, c[i]);
      pen.to(edge[i] + inset, y(0));
      pen.to(edge[i] + inset, y(upTo[i]));
      pen.to(edge[i + 1] - inset, y(upTo[i]));
      pen.to(edge[i + 1] - inset, y(0));
    }
    const isRest = s === own.length;
    return {
      label: isRest ? 'Other models' : own[s].m.model,
      colour: isRest ? COLOURS[COLOURS.length - 1] : COLOURS[s % (COLOURS.length - 1)],
      totalCents: c.reduce((a, b) => a + b, 0),
      d: pen.close(),
      models: isRest ? rest.map((r) => r.m.model).sort() : [],
    };
  });
  const peakDay = dayTotals.indexOf(peakCents);
  const mid = Math.floor((days.length - 1) / 2);
  const at = (i: number) => Math.round(LEFT + i * slot + slot / 2);
  return {
    from,
    to,
    width: W,
    height: H,
    series,
    totalCents: series.reduce((a, s) => a + s.totalCents, 0),
    ticks: [0, 0.25, 0.5, 0.75, 1].map((f) => ({ y: y(top * f), cents: top * f })),
    dates: [
      { x: LEFT, day: days[0], anchor: 'start' as const },
      ...(days.length > 2 ? [{ x: at(mid), day: days[mid], anchor: 'middle' as const }] : []),
      ...(days.length > 1
        ? [{ x: W - RIGHT, day: days[days.length - 1], anchor: 'end' as const }]
        : []),
    ],
    rows: days
      .map((day, i) => ({ label: day, cells: cents.map((c) => c[i]), totalCents: dayTotals[i] }))
      .filter((r) => r.cells.some((v) => v !== 0)),
    peak: peakCents > 0 ? { day: days[peakDay], cents: peakCents } : null,
    plot: { left: LEFT, top: TOP, width: PLOT_W, height: PLOT_H },
  };
}

/**
 * A path of horizontal and vertical lines from (x, y), in relative commands: consecutive moves
 * along one axis are merged (a drop to the axis and a rise at the same x cancel), so a day costs
 * only the changes of height and width.
 */
function stepPen(x: number, y: number) {
  let d = `M${x} ${y}`;
  let atX = x;
  let atY = y;
  let toX = x;
  let toY = y;
  const flush = (axis: 'h' | 'v') => {
    if (axis === 'h' && toX !== atX) {
      d += `h${toX - atX}`;
      atX = toX;
    }
    if (axis === 'v' && toY !== atY) {
      d += `v${toY - atY}`;
      atY = toY;
    }
  };
  return {
    to(nx: number, ny: number) {
      if (nx !== toX) {
        flush('v');
        toX = nx;
      }
      if (ny !== toY) {
        flush('h');
        toY = ny;
      }
    },
    close(): string {
      flush('h');
      flush('v');
      return d + 'Z';
    },
  };
}
