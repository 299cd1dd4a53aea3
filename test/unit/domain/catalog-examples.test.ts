// Catalog `label` and `examples`: checked at load, every problem named with its model and example; the
// built-in catalog ships an example per model whose files exist and are small.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadCatalog, parseCatalog } from '../../../src/backends/catalog.ts';
import { fieldLabel, valueLabel } from '../../../src/studio/presenters.ts';
import { problemsOf, rawModel, withField } from './catalog-fixtures.ts';

describe('field labels', () => {
  it('takes the catalog label, else humanizes the name; refuses an empty or long label', () => {
    const c = loadCatalog();
    const fields = c.get('rendergate/start-end-to-video')!.def.fields;
    expect(fields.map(fieldLabel)).toEqual([
      'Prompt',
      'First frame',
      'Last frame',
      'Duration',
      'Resolution',
      'Background music',
      'Movement amplitude',
      'Seed',
    ]);
    expect(problemsOf(withField({ name: 'n', type: 'number', label: '' }))).toEqual([
      'model "t/a" field "n": label must be a non-empty string of at most 100 characters',
    ]);
    expect(
      problemsOf(withField({ name: 'n', type: 'number', label: 'x'.repeat(101) })),
    ).toHaveLength(1);
  });
});

describe('choice labels', () => {
  const e = { name: 'mode', type: 'enum', values: ['summary', 'shot_list', 'keywords'] };
  it("shows an enum's catalog label, else its value with _ as spaces, capitalised", () => {
    const mode = loadCatalog()
      .get('rendergate/shot-list')!
      .def.fields.find((f) => f.name === 'mode')!;
    expect(mode.values!.map((v) => valueLabel(mode, v))).toEqual([
      'A summary',
      'Keywords',
      'A shot list',
    ]);
    const plain = { ...mode, labels: undefined };
    expect(valueLabel(plain, 'shot_list')).toBe('Shot list');
    expect(valueLabel(plain, true)).toBe('Yes');
    expect(valueLabel(undefined, false)).toBe('No');
    const duration = loadCatalog()
      .get('rendergate/image-to-video')!
      .def.fields.find((f) => f.name === 'duration')!;
    expect(valueLabel(duration, 10)).toBe('10 seconds');
  });
  it('refuses labels of values the field lacks, empty or long ones, and on other types', () => {
    expect(problemsOf(withField({ ...e, labels: { shots: 'Shots' } }))).toEqual([
      'model "t/a" field "mode": labels names "shots", which is not one of values',
    ]);
    expect(problemsOf(withField({ ...e, labels: { summary: '' } }))).toEqual([
      'model "t/a" field "mode": labels of "summary" must be a non-empty string of at most 100 ' +
        'characters',
    ]);
    expect(problemsOf(withField({ ...e, labels: ['A summary'] }))).toEqual([
      'model "t/a" field "mode": labels must be a mapping of values to the text shown for each',
    ]);
    expect(problemsOf(withField({ name: 'n', type: 'number', labels: { 1: 'One' } }))).toEqual([
      'model "t/a" field "n": "labels" does not apply to a number field',
    ]);
  });
});

describe('examples', () => {
  it('the built-in models each ship one, its files beside the catalog and small', () => {
    for (const m of loadCatalog().models) {
      expect(m.examples?.length, m.id).toBeGreaterThanOrEqual(1);
      for (const ex of m.examples!) {
        const files = [
          ...Object.values(ex.files).map((f) => f.file),
          ...('file' in ex.output ? [ex.output.file] : []),
        ];
        for (const f of files) expect(fs.statSync(f).size, f).toBeLessThan(60 * 1024);
      }
    }
  });

  it('names every problem: unknown or invalid inputs, a missing required one, files missing, outside or of the wrong type', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-examples-'));
    fs.writeFileSync(path.join(dir, 'out.mp4'), 'not really a video');
    fs.writeFileSync(path.join(dir, 'out.png'), 'x');
    const model = rawModel({
      fields: [
        { name: 'n', type: 'number', integer: true, minimum: 1, maximum: 10, default: 5 },
        { name: 'img', type: 'url', media: 'image', required: true },
      ],
      examples: [
        { inputs: { n: 3, img: 'out.png' }, output: 'out.mp4' },
        { inputs: { n: 11, z: 1 }, output: 'missing.mp4' },
        { inputs: { img: '../etc/passwd.png' }, output: 'out.png' },
        { inputs: { img: 'https://example.com/a.png' }, output: { text: 'hi' }, extra: 1 },
      ],
    });
    const file = path.join(dir, 'catalog.yaml');
    fs.writeFileSync(file, stringify({ models: [model] }));
    let problems: string[] = [];
    try {
      loadCatalog(file);
    } catch (e) {
      problems = (e as { problems: string[] }).problems;
    }
    expect(problems).toEqual([
      'model "t/a": example #2: inputs.n: 11 must be an integer between 1 and 10',
      'model "t/a": example #2: inputs: "z" is not a field of the model',
      'model "t/a": example #2: inputs: the required field "img" is missing',
      'model "t/a": example #2: output: "missing.mp4" does not exist (relative to the catalog file)',
      'model "t/a": example #3: inputs.img: "../etc/passwd.png" must be a path inside the catalog\'s folder',
      'model "t/a": example #3: output "out.png" must be a video/mp4 file, as the model\'s output is',
      'model "t/a": example #4: unknown key "extra"',
      'model "t/a": example #4: output must be the path of a video/mp4 file',
    ]);
    // The sound one alone loads, with its files resolved.
    fs.writeFileSync(
      file,
      stringify({ models: [{ ...model, examples: [(model.examples as unknown[])[0]] }] }),
    );
    const ex = loadCatalog(file).get('t/a')!.def.examples![0];
    expect(ex.files.img).toEqual({ file: path.join(dir, 'out.png'), contentType: 'image/png' });
    expect(ex.output).toEqual({ file: path.join(dir, 'out.mp4'), contentType: 'video/mp4' });
  });

  it('a text model takes {text} as output; a catalog given as text has no folder to read files from', () => {
    // A text model also says where a chat message goes (`openai.input`, docs/api.md).
    const text = rawModel({
      kind: 'text',
      output: { type: 'text' },
      price: '1',
      openai: { input: 'text' },
      fields: [{ name: 'text', type: 'text', required: true, maxLength: 100 }],
      examples: [{ inputs: { text: 'hello' }, output: { text: 'ok' } }],
    });
    expect(() => parseCatalog(stringify({ models: [text] }))).not.toThrow();
  });
});
