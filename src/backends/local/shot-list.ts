// rendergate/shot-list: real language work on a text with wink-nlp (sentence splitting, part-of-speech
// tagging, lemmas, stop words), deterministic. Three modes:
// - summary: an extractive summary, the `max_items` sentences that carry most of the text's content
//   words (TF-IDF over sentences, normalised for length), in their original order;
// - keywords: the `max_items` strongest terms (nouns and multi-word noun phrases, by lemma), with counts;
// - shot_list: the strongest sentences turned into numbered shots, each with a framing inferred from its
//   words and the subjects (nouns) it shows.
import winkNLP, { type ItemToken } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import type { ResolvedInputs } from '../../domain/catalog.ts';
import { RenderError, type ModelBackend, type RenderOutput } from '../types.ts';
import { throwIfAborted } from './abort.ts';

const nlp = winkNLP(model);
const its = nlp.its;

interface Sentence { index: number; text: string; terms: string[]; nouns: string[] }

const CONTENT = new Set(['NOUN', 'PROPN', 'VERB', 'ADJ']);
// wink's types do not admit its.lemma (it needs the model's add-ons, which the web model has).
const lemmaOf = (t: ItemToken): string => String((t.out as (f: unknown) => unknown)(its.lemma)).toLowerCase();

function analyse(text: string): Sentence[] {
  const doc = nlp.readDoc(text);
  const out: Sentence[] = [];
  doc.sentences().each((s, index) => {
    const terms: string[] = [];
    const nouns: string[] = [];
    let phrase: string[] = [];
    const flush = () => { if (phrase.length > 1) nouns.push(phrase.join(' ')); phrase = []; };
    s.tokens().each((t: ItemToken) => {
      const pos = t.out(its.pos) as string;
      const lemma = lemmaOf(t);
      const word = t.out(its.type) === 'word' && !t.out(its.stopWordFlag) && lemma.length > 1;
      if (word && CONTENT.has(pos)) terms.push(lemma);
      if (word && (pos === 'NOUN' || pos === 'PROPN')) { nouns.push(lemma); phrase.push(lemma); } else flush();
    });
    flush();
    out.push({ index, text: (s.out() as string).trim(), terms, nouns });
  });
  return out.filter((s) => s.text.length > 0);
}

/** TF-IDF of each sentence's content words against the whole text; long sentences do not win by length alone. */
function rank(sentences: Sentence[]): Sentence[] {
  const df = new Map<string, number>();
  for (const s of sentences) for (const t of new Set(s.terms)) df.set(t, (df.get(t) ?? 0) + 1);
  const tf = new Map<string, number>();
  for (const s of sentences) for (const t of s.terms) tf.set(t, (tf.get(t) ?? 0) + 1);
  const n = sentences.length;
  const score = (s: Sentence) => s.terms.reduce((sum, t) => sum + tf.get(t)! * Math.log(1 + n / df.get(t)!), 0) / Math.sqrt(1 + s.terms.length);
  return [...sentences].map((s) => ({ s, v: score(s) })).sort((a, b) => b.v - a.v || a.s.index - b.s.index).map((x) => x.s);
}

function keywords(sentences: Sentence[], max: number): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const s of sentences) for (const k of s.nouns) counts.set(k, (counts.get(k) ?? 0) + (k.includes(' ') ? 2 : 1));
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, max);
}

const CLOSE = /\b(close|closer|detail|face|hand|eye|macro|tiny|small)\b/i;
const WIDE = /\b(over|across|landscape|city|sky|horizon|aerial|harbou?r|valley|crowd|field|sea|mountain|skyline)\b/i;

function framing(text: string): string {
  return CLOSE.test(text) ? 'close-up' : WIDE.test(text) ? 'wide shot' : 'medium shot';
}

export function shotList(inputs: ResolvedInputs): string {
  const text = String(inputs.text ?? '');
  const mode = String(inputs.mode ?? 'summary');
  const max = Number(inputs.max_items ?? 5);
  const sentences = analyse(text);
  if (sentences.length === 0) throw new RenderError('RENDER_INPUT_INVALID', 'The text has no sentences to work on.', false);
  if (mode === 'keywords') {
    const ks = keywords(sentences, max);
    if (ks.length === 0) return 'No keywords: the text has no nouns.';
    return ks.map(([k, c]) => `${k} (${c})`).join('\n');
  }
  const chosen = rank(sentences).slice(0, max).sort((a, b) => a.index - b.index);
  if (mode === 'summary') return chosen.map((s) => s.text).join(' ');
  return chosen.map((s, i) => {
    const subjects = [...new Set(s.nouns.filter((k) => !k.includes(' ')))].slice(0, 4);
    return `Shot ${i + 1} (${framing(s.text)}): ${s.text}${subjects.length ? ` [subjects: ${subjects.join(', ')}]` : ''}`;
  }).join('\n');
}

export function createShotList(): ModelBackend {
  return {
    run: async (inputs, ctx): Promise<RenderOutput> => {
      throwIfAborted(ctx.signal);
      ctx.progress(0);
      const text = shotList(inputs);
      ctx.progress(1);
      return { kind: 'text', text };
    },
  };
}
