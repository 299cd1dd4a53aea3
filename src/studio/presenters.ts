// What the studio's pages say about models and renders, computed once or per row: labels of fields,
// the price range of a model (its price over the catalog's own sample inputs), what a model makes,
// the timings of a render and a failure in plain words.
import type { FieldDef, ModelDef } from '../domain/catalog.ts';
import { sampleInputs, type Catalog, type CompiledModel } from '../domain/catalog-load.ts';
import { euros } from './view.ts';
import { isRenderFailureCode, RENDER_FAILURES } from '../domain/render-failures.ts';

/** The field's catalog label, else its name with `_` as spaces and a capital first letter. */
export const fieldLabel = (f: FieldDef): string => {
  if (f.label) return f.label;
  const s = f.name.replace(/_/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
};

/** An enum's value as people read it: the catalog's `labels`, else the value with `_` as spaces and
 * a capital first letter; a toggle's is Yes or No. */
export const valueLabel = (f: FieldDef | undefined, v: unknown): string => {
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  const s = String(v);
  if (!f || f.type !== 'enum') return s;
  const label = f.labels?.[s];
  if (label) return label;
  const spaced = s.replace(/_/g, ' ').trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
};

const OUTPUT_NAMES: Record<string, string> = {
  'video/mp4': 'MP4 video',
  'video/webm': 'WebM video',
  'image/png': 'PNG image',
  'image/jpeg': 'JPEG image',
  'image/webp': 'WebP image',
};

/** "MP4 video", "Text", … */
export const outputLabel = (m: ModelDef): string =>
  m.output.type === 'text' ? 'Text' : (OUTPUT_NAMES[m.output.contentType] ?? m.output.contentType);

/** Samples evaluated per model at most: a catalog's range is shown, never computed per request. */
const MAX_SAMPLES = 5000;

/** "€0.30–€0.60", or "€0.45" when every input costs the same. */
export function priceRange(model: CompiledModel): string {
  let lo = Infinity;
  let hi = -Infinity;
  let n = 0;
  for (const s of sampleInputs(model.def.fields)) {
    try {
      const c = model.priceProgram.evaluate(s);
      lo = Math.min(lo, c);
      hi = Math.max(hi, c);
    } catch {
      /* a sample the price refuses is not a price */
    }
    if (++n >= MAX_SAMPLES) break;
  }
  if (lo === Infinity) return '';
  return lo === hi ? euros(lo) : `${euros(lo)}–${euros(hi)}`;
}

export interface ModelCard {
  def: ModelDef;
  price: string;
  output: string;
  labels: Record<string, string>;
  /** An input's value as people read it (valueLabel), by field name. */
  shown(name: string, v: unknown): string;
}

/** The cards of the catalog, built once at start (the catalog is fixed for the life of the process). */
export function modelCards(catalog: Catalog): Map<string, ModelCard> {
  return new Map(
    catalog.compiled.map((m) => [
      m.id,
      {
        def: m.def,
        price: priceRange(m),
        output: outputLabel(m.def),
        labels: Object.fromEntries(m.def.fields.map((f) => [f.name, fieldLabel(f)])),
        shown: (name: string, v: unknown) =>
          valueLabel(
            m.def.fields.find((f) => f.name === name),
            v,
          ),
      },
    ]),
  );
}

const seconds = (from: string | null | undefined, to: string | null | undefined) =>
  from && to ? Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000) : null;

/** Queued, started, finished and the seconds between, of a generation's public JSON. */
export function timings(g: Record<string, unknown>) {
  const created = g.createdAt as string;
  const started = g.startedAt as string | null;
  const done = g.completedAt as string | null;
  return {
    queued: created,
    started,
    finished: done,
    waitSeconds: seconds(created, started),
    renderSeconds: seconds(started, done),
  };
}

/** A failure for people: what happened, then the service's own message; the charge was refunded. */
export function plainError(g: Record<string, unknown>): string | null {
  const e = g.error as { code?: string; message?: string } | undefined;
  if (!e) return null;
  const head = isRenderFailureCode(e.code) ? RENDER_FAILURES[e.code] : 'The render failed';
  const refunded =
    (g.refundedCents as number) > 0
      ? ` Its cost, ${euros(g.refundedCents as number)}, was refunded.`
      : '';
  const why = (e.message ?? 'no reason was given').replace(/\.$/, '');
  // A message that only repeats the head (a cancel's) is said once.
  if (why.toLowerCase() === head.toLowerCase()) return `${head}.${refunded}`;
  return `${head}: ${why}.${refunded}`;
}
