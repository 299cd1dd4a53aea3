// A render's own page, for people: titled by its model and the first words of its prompt (not its
// raw id), its inputs by their labels, with images shown as thumbnails instead of their addresses.
import type { ModelCard } from './presenters.ts';

/** Words of the prompt a title keeps; the tab and the heading stay short. */
const TITLE_WORDS = 8;

/** "Image to video: A slow push in on a lighthouse at…", or the model's name alone. */
export function renderTitle(modelName: string, inputs: unknown): string {
  const i = (inputs ?? {}) as Record<string, unknown>;
  const text = typeof i.prompt === 'string' ? i.prompt : typeof i.text === 'string' ? i.text : '';
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return modelName;
  const head = words.slice(0, TITLE_WORDS).join(' ');
  return `${modelName}: ${head}${words.length > TITLE_WORDS ? '…' : ''}`;
}

export interface ShownInput {
  label: string;
  /** The value as people read it; absent for an image. */
  text?: string;
  /** Where the studio shows the image from (an upload through /uploads, else its address). */
  image?: string;
}

/** The render's inputs in the catalog's order, labelled; image inputs as thumbnails. */
export function shownInputs(
  g: Record<string, unknown>,
  card: ModelCard | undefined,
  uploadPrefix: string,
): ShownInput[] {
  const inputs = (g.inputs ?? {}) as Record<string, unknown>;
  const fields = card?.def.fields ?? [];
  const known = fields.filter((f) => f.name in inputs).map((f) => f.name);
  const names = [...known, ...Object.keys(inputs).filter((k) => !known.includes(k))];
  return names.map((name) => {
    const v = inputs[name];
    const field = fields.find((f) => f.name === name);
    const label = card?.labels[name] ?? name;
    if (field?.type === 'url' && field.media === 'image' && typeof v === 'string') {
      if (v.startsWith(uploadPrefix))
        return { label, image: `/uploads/${v.slice(uploadPrefix.length)}` };
      if (/^https?:\/\//i.test(v)) return { label, image: v };
    }
    return { label, text: card ? card.shown(name, v) : String(v) };
  });
}
