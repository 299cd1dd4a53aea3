// Language analysis behind the text model, on wink-nlp's English model (sentence splitting, part-of-speech
// tags, lemmas, stop words): TextRank over sentences for extractive summaries and over words for
// keywords. Everything is deterministic: fixed iteration counts and ties broken by position or spelling.
import winkNLP, { type ItemSentence, type ItsFunction } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

const nlp = winkNLP(model);
// wink's its.* helpers are plain functions that its types declare as methods.
// eslint-disable-next-line @typescript-eslint/unbound-method
const { pos, type, stopWordFlag, lemma } = nlp.its;
const its = { pos, type, stopWordFlag, lemma };
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

/**
 * wink's tokenizer takes time quadratic in the length of a run without whitespace ("a!a!a!…" of 20,000
 * characters took seconds); such runs are cut first, after their sentence marks and then every 64
 * characters. No word of a real text is that long.
 */
const LONG_RUN = /\S{65,}/g;
function breakLongRuns(text: string): string {
  return text.replace(LONG_RUN, (run) =>
    run.replace(/([.!?])(?=\S)/g, '$1 ').replace(LONG_RUN, (r) => r.match(/[^]{1,64}/g)!.join(' ')),
  );
}

export function analyse(text: string): Sentence[] {
  const doc = nlp.readDoc(breakLongRuns(text));
  const sentences: Sentence[] = [];
  doc.sentences().each((s: ItemSentence) => {
    if (sentences.length >= MAX_RANKED_SENTENCES) return; // the rest of a pathological text is not read
    const tokens = s.tokens();
    const words = tokens.out();
    const pos = tokens.out(its.pos);
    const lemmas = tokens.out(lemmaOf).map((l) => l.toLowerCase());
    const types = tokens.out(its.type);
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
        phrases.push({
          key: ws.join(' '),
          text: run.map((i) => (pos[i] === 'PROPN' ? words[i] : words[i].toLowerCase())).join(' '),
          words: ws,
        });
      }
      run = [];
    };
    const plural = (i: number) =>
      pos[i] === 'NOUN' && words[i].toLowerCase() !== lemmas[i] && /s$/i.test(words[i]);
    for (let i = 0; i < words.length; i++) {
      if (usable(i) && CONTENT_POS.has(pos[i])) terms.push(lemmas[i]);
      const last = run[run.length - 1];
      if (last !== undefined && plural(last) && NOUN_POS.has(pos[i])) {
        closeRun(i);
        continue;
      }
      if (usable(i) && (NOUN_POS.has(pos[i]) || pos[i] === 'ADJ') && run.length < 4) run.push(i);
      else closeRun(i);
    }
    closeRun(words.length);
    const sentenceText = s.out().replace(/\s+/g, ' ').trim();
    if (sentenceText && types.some((t) => t === 'word')) {
      sentences.push({
        index: sentences.length,
        text: sentenceText,
        terms,
        phrases,
        wordCount: types.filter((t) => t === 'word').length,
      });
    }
  });
  return sentences;
}

/**
 * A weighted, undirected graph as adjacency maps: `graph[i]` maps each neighbour of node i to the
 * weight of their edge. Sparse, so that memory and time grow with the edges, not with n².
 */
export type Graph = Array<Map<number, number>>;

export function emptyGraph(n: number): Graph {
  return Array.from({ length: n }, () => new Map<number, number>());
}

/** Adds `w` to the undirected edge a–b. */
export function addEdge(graph: Graph, a: number, b: number, w: number): void {
  graph[a].set(b, (graph[a].get(b) ?? 0) + w);
  graph[b].set(a, (graph[b].get(a) ?? 0) + w);
}

/** PageRank over a sparse weighted graph: each iteration costs O(nodes + edges). */
export function pageRank(graph: Graph, damping = 0.85, iterations = 60): number[] {
  const n = graph.length;
  if (n === 0) return [];
  const out = graph.map((edges) => {
    let s = 0;
    for (const w of edges.values()) s += w;
    return s;
  });
  let rank = new Array<number>(n).fill(1 / n);
  for (let it = 0; it < iterations; it++) {
    // A node without edges spreads its rank over every node: summed once, added to all.
    let dangling = 0;
    for (let j = 0; j < n; j++) if (out[j] === 0) dangling += rank[j];
    const next = new Array<number>(n).fill((1 - damping) / n + (damping * dangling) / n);
    for (let j = 0; j < n; j++) {
      if (out[j] === 0) continue;
      const share = (damping * rank[j]) / out[j];
      for (const [i, w] of graph[j]) next[i] += share * w;
    }
    rank = next;
  }
  return rank;
}

/**
 * Most sentences ranked. A 20,000-character text of real prose has a few hundred; a text of ten thousand
 * "a!" has ten thousand, and ranking them all would only make the render slower, not better.
 */
export const MAX_RANKED_SENTENCES = 2_000;
/**
 * A term found in more sentences than this links each of them only to its nearest neighbours in that
 * term's sentence list (this many on each side): a common word adds at most this many edges per sentence
 * instead of linking every pair, so the graph grows linearly with the text. Real texts of the allowed
 * length rarely have such a term, and for them the graph is exactly the dense one.
 */
export const MAX_TERM_LINKS = 8;

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
  // Candidate pairs from an inverted index: only sentences that share a term can be similar.
  const postings = new Map<string, number[]>();
  vectors.forEach((x, i) => {
    for (const t of x.v.keys()) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = []));
      p.push(i);
    }
  });
  const graph = emptyGraph(n);
  const linked = new Set<number>();
  for (const list of postings.values()) {
    const reach = list.length - 1 <= 2 * MAX_TERM_LINKS ? list.length : MAX_TERM_LINKS + 1;
    for (let a = 0; a < list.length; a++) {
      for (let b = a + 1; b < Math.min(list.length, a + reach); b++) {
        const [i, j] = [list[a], list[b]];
        const pair = i * n + j;
        if (linked.has(pair)) continue;
        linked.add(pair);
        const [x, y] = [vectors[i], vectors[j]];
        let dot = 0;
        for (const [t, w] of x.v) dot += w * (y.v.get(t) ?? 0);
        if (dot > 0) addEdge(graph, i, j, dot / (x.norm * y.norm));
      }
    }
  }
  // A slight lead bias: openings state the subject, the usual prior of extractive summaries.
  return pageRank(graph).map((r, i) => r * (1 + 0.15 / (1 + i)));
}

/** Indexes of the `count` best sentences, in reading order. */
export function topSentences(sentences: Sentence[], count: number): number[] {
  const scores = rankSentences(sentences);
  return sentences
    .map((s) => s.index)
    .sort((a, b) => scores[b] - scores[a] || a - b)
    .slice(0, count)
    .sort((a, b) => a - b);
}

export interface Keyword {
  text: string;
  key: string;
  score: number;
  count: number;
}

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
  const graph = emptyGraph(n);
  for (const seq of seqs) {
    for (let i = 0; i < seq.length; i++) {
      for (let j = i + 1; j < Math.min(seq.length, i + 3); j++) {
        const [a, b] = [vocab.get(seq[i])!, vocab.get(seq[j])!];
        if (a !== b) addEdge(graph, a, b, 1);
      }
    }
  }
  const rank = pageRank(graph);
  const wordScore = (w: string) => rank[vocab.get(w)!] * n; // ~1 for an average word
  const candidates = new Map<string, Keyword & { first: number }>();
  let order = 0;
  for (const s of sentences) {
    for (const p of s.phrases) {
      const c = candidates.get(p.key);
      if (c) {
        c.count++;
        continue;
      }
      const mean = p.words.reduce((a, w) => a + wordScore(w), 0) / p.words.length;
      candidates.set(p.key, {
        key: p.key,
        text: p.text,
        score: mean * (1 + 0.25 * (p.words.length - 1)),
        count: 1,
        first: order++,
      });
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
