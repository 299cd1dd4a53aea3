import { describe, expect, it } from 'vitest';
import { createShotList, shotListText } from '../../../src/backends/local/text-shot-list.ts';
import {
  addEdge,
  analyse,
  emptyGraph,
  keywords,
  MAX_RANKED_SENTENCES,
  pageRank,
} from '../../../src/backends/local/text-analysis.ts';
import { RenderError } from '../../../src/backends/types.ts';

const STORY = [
  'The harbour wakes before dawn.',
  'Fishing boats slide out past the old stone lighthouse while gulls circle overhead.',
  'On the quay, Maria checks her nets with cracked, patient hands.',
  'Her brother Tomas runs along the pier, late again, shouting for her to wait.',
  'Maria laughs and throws him a rope.',
  'The boat pulls away from the harbour into a grey, restless sea.',
  'Hours later, the nets come up heavy with silver fish.',
  'A storm builds on the horizon.',
  'Tomas watches the clouds and his face goes pale.',
  'They turn the boat for home as the first rain hits the deck.',
  'At the lighthouse, their mother lights the lamp and waits for the boat.',
];
const text = STORY.join(' ');

const run = (inputs: Record<string, string | number>) => shotListText({ text, ...inputs });

describe('rendergate/shot-list', () => {
  it('answers differently for each mode', () => {
    const outs = ['summary', 'keywords', 'shot_list'].map((mode) => run({ mode, max_items: 5 }));
    expect(new Set(outs).size).toBe(3);
  });

  it('is deterministic', () => {
    for (const mode of ['summary', 'keywords', 'shot_list'])
      expect(run({ mode, max_items: 4 })).toBe(run({ mode, max_items: 4 }));
  });

  it('summarises with whole sentences of the input, at most max_items, in reading order', () => {
    const out = run({ mode: 'summary', max_items: 3 });
    const picked = STORY.filter((s) => out.includes(s));
    expect(picked.length).toBe(3);
    expect(out).toBe(picked.join(' '));
    expect(out.length).toBeLessThan(text.length / 2);
  });

  it('condenses even when max_items exceeds the text', () => {
    const short =
      'Rendergate prices every render in euro cents before it runs. A failed render is refunded. Clients poll until a final status and then read the result.';
    const out = shotListText({ text: short, mode: 'summary', max_items: 5 });
    expect(out.length).toBeGreaterThan(0);
    expect(out.length).toBeLessThan(short.length);
  });

  it('ranks central sentences above incidental ones', () => {
    const out = run({ mode: 'summary', max_items: 2 });
    expect(out).not.toContain('Maria laughs and throws him a rope.');
  });

  it('extracts keywords from the text, one per line, at most max_items', () => {
    const out = run({ mode: 'keywords', max_items: 6 }).split('\n');
    expect(out.length).toBe(6);
    for (const k of out)
      expect(text.toLowerCase()).toContain(k.toLowerCase().split(' ').pop()!.replace(/s$/, ''));
    expect(out.join(' ')).toMatch(/boat|lighthouse|harbour|net/i);
    expect(run({ mode: 'keywords', max_items: 2 }).split('\n').length).toBe(2);
  });

  it('turns sentences into numbered shots with framing, length and keywords', () => {
    const out = run({ mode: 'shot_list', max_items: 4 });
    const shots = out.split('\n').filter((l) => /^\d+\. /.test(l));
    expect(shots.map((l) => l.split('.')[0])).toEqual(['1', '2', '3', '4']);
    for (const l of shots) {
      expect(l).toMatch(
        /^\d+\. (establishing )?(close-up|wide shot|medium shot|medium-wide shot), (tracking|locked off), \d s: /,
      );
      expect(STORY.some((s) => l.endsWith(s))).toBe(true);
    }
    expect(out).toMatch(/keywords: /);
    expect(out).toMatch(/4 shots, about \d+ s in all\.$/);
  });

  it('makes every sentence a shot when there are no more than max_items', () => {
    const out = shotListText({
      text: 'A man walks down a street. He stops at a door.',
      mode: 'shot_list',
      max_items: 20,
    });
    expect(out).toMatch(/^1\. .*walks down a street\./m);
    expect(out).toMatch(/^2\. .*stops at a door\./m);
    expect(out).toContain('tracking');
  });

  it('respects max_items in every mode', () => {
    for (const max of [1, 2, 7]) {
      expect(run({ mode: 'summary', max_items: max }).split(/(?<=\.) /).length).toBeLessThanOrEqual(
        max,
      );
      expect(run({ mode: 'keywords', max_items: max }).split('\n').length).toBeLessThanOrEqual(max);
      expect(
        run({ mode: 'shot_list', max_items: max })
          .split('\n')
          .filter((l) => /^\d+\. /.test(l)).length,
      ).toBe(max);
    }
  });

  it('refuses a text without words', () => {
    expect(() => shotListText({ text: ' ... !!! ', mode: 'summary', max_items: 3 })).toThrow(
      RenderError,
    );
  });

  it('answers through the backend interface with text output', async () => {
    const out = await createShotList().run(
      { text, mode: 'keywords', max_items: 3 },
      {
        signal: new AbortController().signal,
        progress: () => {},
        workDir: '/nonexistent',
        timeLimitSeconds: 5,
        attemptId: 'gen_test-1',
        readUpload: () => Promise.resolve(null),
      },
    );
    expect(out.kind).toBe('text');
  });

  // Time and memory of the largest texts are measured in `npm run bench` (the text-model scenario);
  // here, what bounds them: a text without whitespace is cut into words, and at most
  // MAX_RANKED_SENTENCES sentences are read.
  it('reads a pathological text as bounded sentences', () => {
    const sentences = analyse('a!'.repeat(10_000));
    expect(sentences.length).toBe(MAX_RANKED_SENTENCES);
    expect(shotListText({ text: 'a!'.repeat(10_000), mode: 'shot_list', max_items: 20 })).toMatch(
      /20 shots/,
    );
  });
});

describe('text analysis', () => {
  it('finds noun phrases and repairs verbs the tagger calls nouns', () => {
    const [s] = analyse('On the quay, Maria checks her nets with cracked, patient hands.');
    const keys = s.phrases.map((p) => p.key);
    expect(keys).toContain('net');
    expect(keys.some((k) => k.includes('check'))).toBe(false);
  });

  it('ranks the hub of a star graph highest', () => {
    const g = emptyGraph(4);
    for (const leaf of [1, 2, 3]) addEdge(g, 0, leaf, 1);
    const r = pageRank(g);
    expect(r[0]).toBeGreaterThan(r[1]);
    expect(r.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
  });

  it('does not repeat a keyword inside a stronger phrase', () => {
    const ks = keywords(analyse(text), 20).map((k) => k.key.split(' '));
    ks.forEach((words, i) => {
      for (const better of ks.slice(0, i))
        expect(words.every((w) => better.includes(w))).toBe(false);
    });
  });
});
