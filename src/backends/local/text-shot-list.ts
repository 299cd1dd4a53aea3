// rendergate/shot-list: reads a script or description and answers, by `mode`, with
// - summary: an extractive summary, the most central sentences (TextRank) in reading order, at most
//   `max_items` and at most half the text, so it always condenses;
// - keywords: the `max_items` strongest terms and noun phrases, one per line;
// - shot_list: the text cut into numbered shots (its most central sentences when it has more than
//   `max_items`), each with a framing, a camera note, a length and the keywords it shows.
import type { ResolvedInputs } from '../../domain/catalog.ts';
import { RenderError, type ModelBackend, type RenderOutput } from '../types.ts';
import { renderDeadline, throwIfAborted } from './abort.ts';
import { shotListOffThread } from './text-pool.ts';
import { analyse, keywords, topSentences, type Sentence } from './text-analysis.ts';
import { enumInput, numberInput, textInput } from './video-common.ts';

const MODES = ['summary', 'keywords', 'shot_list'] as const;
type Mode = (typeof MODES)[number];

export function createShotList(): ModelBackend {
  return {
    run: async (inputs, ctx): Promise<RenderOutput> => {
      throwIfAborted(ctx.signal);
      ctx.progress(0);
      // Off the event loop, and stopped (its thread terminated) at the model's time limit.
      const limit = renderDeadline(ctx.signal, ctx.timeLimitSeconds);
      try {
        const text = await shotListOffThread(inputs, limit.signal);
        ctx.progress(1);
        return { kind: 'text', text };
      } finally {
        limit.dispose();
      }
    },
  };
}

export function shotListText(inputs: ResolvedInputs): string {
  const text = textInput(inputs, 'text', true);
  const mode: Mode = enumInput(inputs, 'mode', 'summary', MODES);
  const max = Math.floor(numberInput(inputs, 'max_items', 5, 1, 100));
  const sentences = analyse(text);
  if (sentences.length === 0)
    throw new RenderError('RENDER_INPUT_INVALID', 'The text has no words to work on.', false);
  if (mode === 'summary') return summary(sentences, max);
  if (mode === 'keywords') {
    const ks = keywords(sentences, max);
    return ks.length > 0
      ? ks.map((k) => k.text).join('\n')
      : 'No keywords: the text names no things.';
  }
  return shots(sentences, max);
}

function summary(sentences: Sentence[], max: number): string {
  const count = Math.max(1, Math.min(max, Math.ceil(sentences.length / 2)));
  return topSentences(sentences, count)
    .map((i) => sentences[i].text)
    .join(' ');
}

const CLOSE =
  /\b(close[\s-]?up|detail|face|faces|eyes?|hands?|fingers?|lips|tears?|smile[sd]?|ring|letter|screen|phone|macro|tiny)\b/i;
const WIDE =
  /\b(landscape|city|cityscape|skyline|sky|horizon|aerial|harbou?r|valley|crowd|field|fields|sea|ocean|mountains?|desert|forest|street|square|coast|beach|panorama)\b/i;
const MOVING =
  /\b(walk|walks|walked|walking|run|runs|ran|running|drive|drives|drove|driving|rides?|riding|fly|flies|flew|flying|follows?|followed|chases?|chased|moves?|moved|moving|crosses|crossed|climbs?|climbed|races?|raced)\b/i;

function framing(s: Sentence, position: number): string {
  if (CLOSE.test(s.text)) return 'close-up';
  if (WIDE.test(s.text)) return position === 0 ? 'establishing wide shot' : 'wide shot';
  return position === 0 ? 'establishing medium-wide shot' : 'medium shot';
}

/** Screen time from reading pace (about 2.5 words a second), 2 to 8 seconds. */
function seconds(s: Sentence): number {
  return Math.min(8, Math.max(2, Math.round(s.wordCount / 2.5)));
}

function shots(sentences: Sentence[], max: number): string {
  const picked =
    sentences.length <= max ? sentences.map((s) => s.index) : topSentences(sentences, max);
  // Each shot's keywords: the globally strongest candidates that this sentence contains.
  const global = keywords(sentences, 200);
  const strength = new Map(global.map((k, i) => [k.key, i]));
  const lines: string[] = [];
  let total = 0;
  picked.forEach((index, n) => {
    const s = sentences[index];
    const own = rankOwn(s, strength);
    const camera = MOVING.test(s.text) ? 'tracking' : 'locked off';
    const length = seconds(s);
    total += length;
    lines.push(`${n + 1}. ${framing(s, n)}, ${camera}, ${length} s: ${s.text}`);
    if (own.length > 0) lines.push(`   keywords: ${own.join(', ')}`);
  });
  lines.push(`${picked.length} shot${picked.length === 1 ? '' : 's'}, about ${total} s in all.`);
  return lines.join('\n');
}

function rankOwn(s: Sentence, strength: Map<string, number>): string[] {
  const seen = new Map<string, string>();
  for (const p of s.phrases) if (!seen.has(p.key)) seen.set(p.key, p.text);
  const rankOf = (k: string) => strength.get(k) ?? Number.MAX_SAFE_INTEGER;
  return [...seen.keys()]
    .map((k, order) => ({ k, order }))
    .sort((a, b) => rankOf(a.k) - rankOf(b.k) || a.order - b.order)
    .slice(0, 3)
    .map(({ k }) => seen.get(k)!);
}
