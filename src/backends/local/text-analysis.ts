// Language analysis behind the text model, on wink-nlp's English model (sentence splitting, part-of-speech
// tags, lemmas, stop words): TextRank over sentences for extractive summaries and over words for
// keywords. Everything is deterministic: fixed iteration counts and ties broken by position or spelling.
import winkNLP, { type ItemSentence, type ItsFunction } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

const nlp = winkNLP(model);
const its = nlp.its;
// wink's types do not admit its.lemma as a token function (it needs the model's add-ons, which this model has).
const lemmaOf = its.lemma as unknown as ItsFunction<string>;

export interface Phrase {
  /** Lower-case lemmas: the grouping key. */
  key: string;
  /** How it was written (first occurrence). */
  text: string;
  words: string[];
}

export interface Sentence {
  index: number;
  text: string;
  /** Lemmas of content words (nouns, verbs, adjectives, adverbs), stop words left out. */
  terms: string[];
  /** Keyword candidates: single nouns and runs of adjectives and nouns that end in a noun. */
  phrases: Phrase[];
  /** Number of words (for timing). */
  wordCount: number;
}

const CONTENT_POS = new Set(['NOUN', 'PROPN', 'VERB', 'ADJ', 'ADV']);
const NOUN_POS = new Set(['NOUN', 'PROPN']);

export function analyse(text: string): Sentence[] {
  const doc = nlp.readDoc(text);
  const sentences: Sentence[] = [];
  doc.sentences().each((s: ItemSentence) => {
    const tokens = s.tokens();
    const words = tokens.out() as string[];
    const pos = tokens.out(its.pos) as string[];
    const lemmas = (tokens.out(lemmaOf) as string[]).map((l) => l.toLowerCase());
    const types = tokens.out(its.type) as string[];
    const stop = tokens.out(its.stopWordFlag) as boolean[];
    const usable = (i: number) => types[i] === 'word' && !stop[i] && lemmas[i].length > 1;

    const terms: string[] = [];
    const phrases: Phrase[] = [];
    let run: number[] = [];
    // The light model tags many verbs as nouns ("Maria checks her nets", "boats slide out"); two patterns
    // catch most of them: a noun right before a determiner or pronoun is a verb taking its object, and a
    // noun right after a plural noun is a verb (English compounds rarely start with a plural).
    const closeRun = (next: number) => {
      if (run.length > 1 && (pos[next] === 'DET' || pos[next] === 'PRON')) run.pop();
      while (run.length > 0 && !NOUN_POS.has(pos[run[run.length - 1]])) run.pop(); // must end in a noun
      if (run.length > 0) {
        const ws = run.map((i) => lemmas[i]);
        phrases.push({ key: ws.join(' '), text: run.map((i) => (pos[i] === 'PROPN' ? words[i] : words[i].toLowerCase())).join(' '), words: ws });
      }
      run = [];
    };
    const plural = (i: number) => pos[i] === 'NOUN' && words[i].toLowerCase() !== lemmas[i] && /s$/i.test(words[i]);
    for (let i = 0; i < words.length; i++) {
      if (usable(i) && CONTENT_POS.has(pos[i])) terms.push(lemmas[i]);
      const last = run[run.length - 1];
      if (last !== undefined && plural(last) && NOUN_POS.has(pos[i])) { closeRun(i); continue; }
      if (usable(i) && (NOUN_POS.has(pos[i]) || pos[i] === 'ADJ') && run.length < 4) run.push(i);
      else closeRun(i);
    }
    closeRun(words.length);
    const sentenceText = (s.out() as string).replace(/\s+/g, ' ').trim();
    if (sentenceText && types.some((t) => t === 'word')) {
      sentences.push({ index: sentences.length, text: sentenceText, terms, phrases, wordCount: types.filter((t) => t === 'word').length });
    }
  });
  return sentences;
}

/** PageRank over a weighted, undirected graph given as a symmetric matrix of edge weights. */
export function pageRank(weights: number[][], damping = 0.85, iterations = 60): number[] {
  const n = weights.length;
  if (n === 0) return [];
  const out = weights.map((row) => row.reduce((a, b) => a + b, 0));
  let rank = new Array<number>(n).fill(1 / n);
  for (let it = 0; it < iterations; it++) {
    const next = new Array<number>(n).fill((1 - damping) / n);
    for (let j = 0; j < n; j++) {
      if (out[j] === 0) { for (let i = 0; i < n; i++) next[i] += (damping * rank[j]) / n; continue; }
      for (let i = 0; i < n; i++) if (weights[j][i] > 0) next[i] += (damping * rank[j] * weights[j][i]) / out[j];
    }
    rank = next;
  }
  return rank;
}

/** TextRank scores of sentences: centrality in a graph whose edges are TF-IDF cosine similarities. */
export function rankSentences(sentences: Sentence[]): number[] {
  const n = sentences.length;
  const df = new Map<string, number>();
  for (const s of sentences) for (const t of new Set(s.terms)) df.set(t, (df.get(t) ?? 0) + 1);
  const vectors = sentences.map((s) => {
    const v = new Map<string, number>();
    for (const t of s.terms) v.set(t, (v.get(t) ?? 0) + Math.log(1 + n / df.get(t)!));
    const norm = Math.sqrt([...v.values()].reduce((a, x) => a + x * x, 0));
    return { v, norm };
  });
  const weights = vectors.map((a, i) => vectors.map((b, j) => {
    if (i === j || a.norm === 0 || b.norm === 0) return 0;
    let dot = 0;
    for (const [t, x] of a.v) dot += x * (b.v.get(t) ?? 0);
    return dot / (a.norm * b.norm);
  }));
  // A slight lead bias: openings state the subject, the usual prior of extractive summaries.
  return pageRank(weights).map((r, i) => r * (1 + 0.15 / (1 + i)));
}

/** Indexes of the `count` best sentences, in reading order. */
export function topSentences(sentences: Sentence[], count: number): number[] {
  const scores = rankSentences(sentences);
  return sentences.map((s) => s.index)
    .sort((a, b) => scores[b] - scores[a] || a - b)
    .slice(0, count)
    .sort((a, b) => a - b);
}

export interface Keyword { text: string; key: string; score: number; count: number }

/**
 * Keywords by TextRank over words (nouns and adjectives linked when they occur within 3 content words of
 * each other), then merged into the noun phrases of the text; a phrase scores the mean of its words plus a
 * bonus per extra word, and candidates already covered by a better phrase are dropped.
 */
export function keywords(sentences: Sentence[], max: number): Keyword[] {
  const vocab = new Map<string, number>();
  const seqs = sentences.map((s) => s.phrases.flatMap((p) => p.words));
  for (const seq of seqs) for (const w of seq) if (!vocab.has(w)) vocab.set(w, vocab.size);
  const n = vocab.size;
  if (n === 0) return [];
  const weights = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const seq of seqs) {
    for (let i = 0; i < seq.length; i++) {
      for (let j = i + 1; j < Math.min(seq.length, i + 3); j++) {
        const [a, b] = [vocab.get(seq[i])!, vocab.get(seq[j])!];
        if (a !== b) { weights[a][b] += 1; weights[b][a] += 1; }
      }
    }
  }
  const rank = pageRank(weights);
  const wordScore = (w: string) => rank[vocab.get(w)!] * n; // ~1 for an average word
  const candidates = new Map<string, Keyword & { first: number }>();
  let order = 0;
  for (const s of sentences) {
    for (const p of s.phrases) {
      const c = candidates.get(p.key);
      if (c) { c.count++; continue; }
      const mean = p.words.reduce((a, w) => a + wordScore(w), 0) / p.words.length;
      candidates.set(p.key, { key: p.key, text: p.text, score: mean * (1 + 0.25 * (p.words.length - 1)), count: 1, first: order++ });
    }
  }
  const ranked = [...candidates.values()]
    .map((c) => ({ ...c, score: c.score * (1 + Math.log(c.count)) }))
    .sort((a, b) => b.score - a.score || a.first - b.first);
  const chosen: Keyword[] = [];
  for (const c of ranked) {
    if (chosen.length >= max) break;
    const words = c.key.split(' ');
    const covered = chosen.some((k) => words.every((w) => k.key.split(' ').includes(w)));
    if (!covered) chosen.push({ text: c.text, key: c.key, score: c.score, count: c.count });
  }
  return chosen;
}
