// The built-in catalog matches the seed; a bad catalog is refused naming every model and field at fault.
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DEFAULT_CATALOG_PATH } from '../../../src/domain/catalog-load.ts';
import { loadCatalog, parseCatalog } from '../../../src/backends/catalog.ts';
import { toPublicModel } from '../../../src/domain/model-view.ts';
import {
  MODEL_A,
  MODEL_B,
  TEXT_MODEL,
  loadModels,
  problemsOf,
  problemsOfText,
  rawModel,
  withField,
  writeTemp,
} from './catalog-fixtures.ts';

const catalog = loadCatalog();
const pick = (id: string) =>
  Object.fromEntries(
    toPublicModel(catalog.get(id)!).fields.map((f) => [
      f.name,
      [f.type, f.required, f.default, f.values ?? null],
    ]),
  );

describe('the default catalog', () => {
  it('lists its models in file order', () => {
    expect(catalog.models.map((m) => m.id)).toEqual([MODEL_A, MODEL_B, TEXT_MODEL]);
    expect(catalog.get('nobody/nothing')).toBeUndefined();
  });

  it('has exactly the seed fields of model A and model B', () => {
    expect(pick(MODEL_A)).toEqual({
      prompt: ['text', true, null, null],
      image: ['url', true, null, null],
      last_image: ['url', true, null, null],
      duration: ['number', false, 5, null],
      resolution: ['enum', false, '720p', ['540p', '720p', '1080p']],
      bgm: ['toggle', false, true, null],
      movement_amplitude: ['enum', false, 'auto', ['auto', 'small', 'medium', 'large']],
      seed: ['number', false, null, null],
    });
    expect(pick(MODEL_B)).toEqual({
      prompt: ['text', true, null, null],
      image: ['url', true, null, null],
      negative_prompt: ['text', false, null, null],
      guidance_scale: ['number', false, 0.5, null],
      duration: ['enum', false, 5, [5, 10]],
    });
  });

  it('uses the bounds of docs/api.md where the seed is silent', () => {
    const a = toPublicModel(catalog.get(MODEL_A)!);
    const f = (n: string) => a.fields.find((x) => x.name === n)!;
    expect(f('duration')).toMatchObject({ integer: true, minimum: 1, maximum: 10 });
    expect(f('seed')).toMatchObject({ integer: true, minimum: 0, maximum: 2147483647 });
    expect(f('prompt').maxLength).toBe(2000);
    expect(f('image').media).toBe('image');
    expect(a).toMatchObject({ kind: 'video', output: { type: 'file', contentType: 'video/mp4' } });
    const b = toPublicModel(catalog.models[1]);
    expect(b.fields.find((x) => x.name === 'guidance_scale')).toMatchObject({
      minimum: 0,
      maximum: 1,
    });
    expect(b.fields.find((x) => x.name === 'negative_prompt')!.maxLength).toBe(2000);
    expect(toPublicModel(catalog.get(TEXT_MODEL)!)).toMatchObject({
      kind: 'text',
      output: { type: 'text' },
    });
  });

  it('shows no price, backend or limits, and no undefined keys', () => {
    for (const m of catalog.models) {
      const view = toPublicModel(m);
      expect(Object.keys(view)).toEqual(['id', 'name', 'kind', 'description', 'output', 'fields']);
      const json = JSON.stringify(view);
      expect(json).not.toMatch(/price|backend|renderer|timeLimit|maxAttempts/);
      expect(JSON.parse(json)).toEqual(view); // nothing undefined to drop
      for (const f of view.fields) expect(f.description).toEqual(expect.any(String));
    }
  });

  it('gives every model its limits', () => {
    for (const m of catalog.models) {
      expect(Number.isSafeInteger(m.timeLimitSeconds) && m.timeLimitSeconds > 0).toBe(true);
      expect(Number.isSafeInteger(m.maxAttempts) && m.maxAttempts > 0).toBe(true);
      expect(m.backend.driver).toBe('local');
    }
  });

  it('loads the same from JSON', () => {
    const yaml = parseCatalog(stringify({ models: [rawModel()] }), 'x.yaml');
    const json = loadCatalog(writeTemp(JSON.stringify({ models: [rawModel()] }), 'json'));
    expect(json.models).toEqual(yaml.models);
    expect(DEFAULT_CATALOG_PATH).toMatch(/catalog\/default\.yaml$/);
  });
});

describe('a bad catalog', () => {
  const field = (f: Record<string, unknown>, over = {}) => problemsOf(withField(f, over));

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a bad field type',
      { name: 'x', type: 'strnig' },
      /^model "t\/a" field "x": type must be one of/,
    ],
    [
      'a default outside the enum',
      { name: 'x', type: 'enum', values: ['a', 'b'], default: 'c' },
      /^model "t\/a" field "x": default "c" must be one of "a", "b"$/,
    ],
    [
      'an enum default of the other type',
      { name: 'x', type: 'enum', values: [5, 10], default: '5' },
      /field "x": default "5" must be one of 5, 10/,
    ],
    [
      'a default above the maximum',
      { name: 'x', type: 'number', minimum: 1, maximum: 10, default: 11 },
      /^model "t\/a" field "x": default 11 must be a number between 1 and 10$/,
    ],
    [
      'a fractional integer default',
      { name: 'x', type: 'number', integer: true, default: 1.5 },
      /field "x": default 1.5 must be an integer/,
    ],
    [
      'minimum above maximum',
      { name: 'x', type: 'number', minimum: 3, maximum: 2 },
      /field "x": minimum 3 is above maximum 2/,
    ],
    [
      'fractional bounds on an integer',
      { name: 'x', type: 'number', integer: true, minimum: 0.5 },
      /field "x": minimum must be an integer/,
    ],
    [
      'mixed enum values',
      { name: 'x', type: 'enum', values: ['a', 1] },
      /field "x": values must be a non-empty list/,
    ],
    [
      'empty enum values',
      { name: 'x', type: 'enum', values: [] },
      /field "x": values must be a non-empty list/,
    ],
    [
      'duplicate enum values',
      { name: 'x', type: 'enum', values: ['a', 'a'] },
      /field "x": values lists "a" twice/,
    ],
    [
      'a text default too long',
      { name: 'x', type: 'text', maxLength: 3, default: 'abcd' },
      /field "x": default "abcd" must be at most 3/,
    ],
    [
      'a zero maxLength',
      { name: 'x', type: 'text', maxLength: 0 },
      /field "x": maxLength must be a positive integer/,
    ],
    [
      'a toggle default that is not boolean',
      { name: 'x', type: 'toggle', default: 'yes' },
      /field "x": default "yes" must be true or false/,
    ],
    [
      'a url default',
      { name: 'x', type: 'url', default: 'https://e.com/a.png' },
      /field "x": a url field takes no default/,
    ],
    [
      'a required field with a default',
      { name: 'x', type: 'text', required: true, default: 'a' },
      /field "x": a required field takes no default/,
    ],
    [
      'a key of another type',
      { name: 'x', type: 'number', maxLength: 3 },
      /field "x": "maxLength" does not apply to a number field/,
    ],
    [
      'an unknown key',
      { name: 'x', type: 'text', defualt: 'a' },
      /field "x": unknown key "defualt"/,
    ],
    ['a bad media', { name: 'x', type: 'url', media: 'video' }, /field "x": media must be "image"/],
    [
      'a reserved name',
      { name: 'inputs', type: 'toggle' },
      /field "inputs": name "inputs" is reserved/,
    ],
    ['a CEL type name', { name: 'int', type: 'toggle' }, /field "int": name "int" is reserved/],
    [
      'a name that is no identifier',
      { name: 'a-b', type: 'toggle' },
      /field "a-b": name must be an identifier/,
    ],
  ])('refuses %s, naming model and field', (_what, f, re) => {
    const p = field(f, { price: '1' });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(re);
  });

  it('refuses a field name used twice', () => {
    const m = rawModel();
    m.fields.push({ name: 'n', type: 'toggle', default: true });
    expect(problemsOf(m)).toEqual(['model "t/a" field "n": name is used twice']);
  });

  it.each<[string, string, RegExp]>([
    ['a price that does not parse', 'n *', /^model "t\/a" price: does not parse: Unexpected token/],
    [
      'a price over an unknown name',
      'm * 2',
      /^model "t\/a" price: does not type-check: Unknown variable: m/,
    ],
    ['a double price', 'n * 1.5', /^model "t\/a" price: does not type-check|must yield an int/],
    [
      'a price that is a double for some inputs',
      'n == 10 ? dyn(1.5) : dyn(2)',
      /price: must yield an int of cents, got the double 1\.5 \(for inputs \{"n":10\}\)/,
    ],
    [
      'a price negative for some inputs',
      'n - 3',
      /^model "t\/a" price: must not be negative, got -2 \(for inputs \{"n":1\}\)$/,
    ],
    [
      'a price that fails for some inputs',
      '100 / (n - 3 + (n < 3 ? 9 : 0))',
      /price: failed: division by zero \(for inputs \{"n":3\}\)/,
    ],
    ['a price reading a missing key', 'inputs.nope', /price: failed: No such key: nope/],
  ])('refuses %s', (_what, price, re) => {
    const p = problemsOf(rawModel({ price }));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(re);
  });

  it('samples only values a client could send', () => {
    const fields = [
      { name: 'lo', type: 'number', minimum: 2, default: 2 },
      { name: 'hi', type: 'number', integer: true, maximum: -3 },
    ];
    expect(() =>
      loadModels(rawModel({ fields, price: 'int(lo) - 2 + (has(inputs.hi) ? -2 - hi : 0)' })),
    ).not.toThrow();
  });

  it('refuses a price that uses an absent optional field without has()', () => {
    const p = problemsOf(
      withField({ name: 'opt', type: 'number', integer: true }, { price: 'opt + 1' }),
    );
    expect(p).toEqual(['model "t/a" price: failed: Unknown variable: opt (for inputs {"n":5})']);
  });

  it('refuses bad model ids and duplicate ids', () => {
    expect(problemsOf(rawModel({ id: 'noslash' }))).toEqual([
      'model "noslash": id must be <vendor>/<model_name> (letters, digits, . _ -)',
    ]);
    expect(problemsOf(rawModel({ id: 'a/b/c' }))[0]).toMatch(/^model "a\/b\/c": id must be/);
    expect(problemsOf(rawModel(), rawModel())).toEqual([
      'model "t/a": id is already used by an earlier model',
    ]);
  });

  it('refuses bad model keys, naming each', () => {
    const p = problemsOf(
      rawModel({
        kind: 'audio',
        output: { type: 'text' },
        backend: { driver: 'http' },
        timeLimitSeconds: 0,
        maxAttempts: 1.5,
        name: '',
        extra: 1,
      }),
    );
    expect(p).toEqual([
      'model "t/a": unknown key "extra"',
      'model "t/a": name must be a non-empty string',
      'model "t/a": kind must be one of video, image, text',
      'model "t/a": a text model has output {type: text}; other kinds a file',
      'model "t/a": backend.driver must be one of local, cog, comfyui, openai, replicate, fal',
      'model "t/a": timeLimitSeconds must be a positive integer',
      'model "t/a": maxAttempts must be a positive integer',
    ]);
    expect(problemsOf(rawModel({ output: { type: 'file', contentType: 'mp4' } }))).toEqual([
      'model "t/a": output.contentType must be a media type such as video/mp4',
    ]);
  });

  it('lists every problem of every model, not just the first', () => {
    const p = problemsOf(
      withField({ name: 'x', type: 'enum', values: ['a'], default: 'b' }),
      rawModel({ id: 't/b', price: 'n *' }),
      rawModel({
        id: 'bad',
        fields: [{ name: 'y', type: 'number', minimum: 5, maximum: 1 }, { type: 'toggle' }],
      }),
    );
    expect(p).toEqual([
      'model "t/a" field "x": default "b" must be one of "a"',
      'model "bad": id must be <vendor>/<model_name> (letters, digits, . _ -)',
      'model "bad" field "y": minimum 5 is above maximum 1',
      'model "bad" field #2: name must be an identifier (letters, digits and _, at most 64)',
      'model "t/b" price: does not parse: Unexpected token: EOF',
    ]);
  });

  it('refuses documents that are not catalogs', () => {
    expect(problemsOfText('models: [')[0]).toMatch(/^not valid YAML/);
    expect(problemsOfText('models: []\nmodels: []')[0]).toMatch(
      /^not valid YAML.*[Mm]ap keys must be unique/,
    );
    expect(problemsOfText('- 1')).toEqual(['catalog: must be a mapping with a `models` list']);
    expect(problemsOfText('models: []\nmodles: 1')).toEqual([
      'catalog: unknown key "modles"',
      'catalog: `models` must be a non-empty list',
    ]);
    expect(problemsOfText('{"models": ', 'json')[0]).toMatch(/^not valid JSON/);
    expect(() => loadCatalog('/nonexistent/catalog.yaml')).toThrowError(
      /Invalid catalog \/nonexistent\/catalog.yaml:\n {2}- cannot be read/,
    );
  });
});
