// docs/api.md "Inputs": strict types, defaults, every bad field named once.
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../../src/backends/catalog.ts';
import { ApiError } from '../../../src/domain/errors.ts';
import {
  parseRenderRequest,
  resolveInputs,
  validateRequestBody,
} from '../../../src/domain/inputs.ts';
import { MODEL_A, MODEL_B, loadModels, withField } from './catalog-fixtures.ts';

const catalog = loadCatalog();
const A = catalog.get(MODEL_A)!;
const B = catalog.get(MODEL_B)!;
const baseA = {
  prompt: 'a fox',
  image: 'https://example.com/a.png',
  last_image: 'https://example.com/b.png',
};
const baseB = { prompt: 'a lighthouse', image: 'https://example.com/a.png' };

/** The INVALID_INPUT details thrown for these inputs. */
function problems(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe('INVALID_INPUT');
    return (e as ApiError).details as { field: string; message: string }[];
  }
  throw new Error('expected INVALID_INPUT');
}
const badA = (over: Record<string, unknown>) =>
  problems(() => resolveInputs(A, { ...baseA, ...over }));
const badB = (over: Record<string, unknown>) =>
  problems(() => resolveInputs(B, { ...baseB, ...over }));

describe('defaults and shape', () => {
  it('applies defaults, leaves null-default fields absent, keys in field order', () => {
    const r = resolveInputs(A, { last_image: baseA.last_image, image: baseA.image, prompt: 'p' });
    expect(r).toEqual({
      ...baseA,
      prompt: 'p',
      duration: 5,
      resolution: '720p',
      bgm: true,
      movement_amplitude: 'auto',
    });
    expect(Object.keys(r)).toEqual([
      'prompt',
      'image',
      'last_image',
      'duration',
      'resolution',
      'bgm',
      'movement_amplitude',
    ]);
    expect(resolveInputs(B, baseB)).toEqual({ ...baseB, guidance_scale: 0.5, duration: 5 });
  });

  it('keeps given values (false stays false) and returns a new object', () => {
    const given = { ...baseA, bgm: false, seed: 7, duration: 10 };
    const r = resolveInputs(A, given);
    expect(r.bgm).toBe(false);
    expect(r.seed).toBe(7);
    expect(Object.keys(r).at(-1)).toBe('seed');
    expect(r).not.toBe(given);
  });

  it('treats an explicit null on an optional field as omitted', () => {
    const r = resolveInputs(A, { ...baseA, bgm: null, seed: null });
    expect(r.bgm).toBe(true);
    expect('seed' in r).toBe(false);
  });

  it.each([[null], [[]], ['x'], [5], [true]])(
    'refuses inputs %j that are not an object',
    (inputs) => {
      expect(problems(() => resolveInputs(A, inputs))).toEqual([
        { field: 'inputs', message: 'must be a JSON object' },
      ]);
    },
  );

  it('requires required fields, present and not null', () => {
    expect(problems(() => resolveInputs(A, {}))).toEqual(
      ['prompt', 'image', 'last_image'].map((n) => ({
        field: `inputs.${n}`,
        message: 'is required',
      })),
    );
    expect(badB({ prompt: null })).toEqual([{ field: 'inputs.prompt', message: 'is required' }]);
  });

  it('refuses unknown names, __proto__ included, and names every bad field once', () => {
    expect(badB({ durration: 5 })).toEqual([
      { field: 'inputs.durration', message: 'is not a field of this model' },
    ]);
    const proto = JSON.parse('{"prompt":"p","image":"https://e.com/a.png","__proto__":{"x":1}}');
    expect(problems(() => resolveInputs(B, proto)).map((p) => p.field)).toEqual([
      'inputs.__proto__',
    ]);
    const all = problems(() =>
      resolveInputs(A, {
        image: 'ftp://x',
        duration: 0,
        resolution: '4k',
        bgm: 'yes',
        seed: -1,
        extra: 1,
      }),
    );
    expect(all.map((p) => p.field)).toEqual([
      'inputs.prompt',
      'inputs.image',
      'inputs.last_image',
      'inputs.duration',
      'inputs.resolution',
      'inputs.bgm',
      'inputs.seed',
      'inputs.extra',
    ]);
  });

  it('bounds how many unknown names it echoes', () => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x${i}`, 1]));
    const p = badB(many);
    expect(p).toHaveLength(51);
    expect(p.at(-1)).toEqual({ field: 'inputs', message: 'has 10 more unknown fields' });
  });

  it('never reads a field from the prototype', () => {
    const c = loadModels(
      withField(
        { name: 'constructor', type: 'text' },
        { price: 'has(inputs.constructor) ? 2 : 1' },
      ),
    );
    const m = c.get('t/a')!;
    expect(resolveInputs(m, {})).toEqual({ n: 5 });
  });
});

describe('number', () => {
  it.each([1, 10, 5])('accepts duration %d within 1..10 inclusive', (v) => {
    expect(resolveInputs(A, { ...baseA, duration: v }).duration).toBe(v);
  });
  it.each([
    0,
    11,
    -1,
    5.5,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    '5',
    true,
    [5],
    { v: 5 },
    NaN,
    Infinity,
  ])('refuses duration %j', (v) => {
    expect(badA({ duration: v })).toEqual([
      { field: 'inputs.duration', message: 'must be an integer between 1 and 10' },
    ]);
  });
  it('accepts seed at its bounds and turns -0 into 0', () => {
    expect(resolveInputs(A, { ...baseA, seed: 2147483647 }).seed).toBe(2147483647);
    expect(Object.is(resolveInputs(A, { ...baseA, seed: -0 }).seed, 0)).toBe(true);
    expect(badA({ seed: 2147483648 })[0].message).toBe(
      'must be an integer between 0 and 2147483647',
    );
  });
  it('takes fractions where not integer, within bounds', () => {
    for (const v of [0, 1, 0.25])
      expect(resolveInputs(B, { ...baseB, guidance_scale: v }).guidance_scale).toBe(v);
    for (const v of [-0.001, 1.0000001, 'high', 1e308]) {
      expect(badB({ guidance_scale: v })).toEqual([
        { field: 'inputs.guidance_scale', message: 'must be a number between 0 and 1' },
      ]);
    }
  });
  it('describes one-sided and unbounded numbers', () => {
    const m = loadModels(
      withField(
        { name: 'lo', type: 'number', minimum: 2 },
        {
          fields: [
            { name: 'lo', type: 'number', minimum: 2 },
            { name: 'hi', type: 'number', maximum: 3 },
            { name: 'any', type: 'number', integer: true },
          ],
          price: '1',
        },
      ),
    ).get('t/a')!;
    expect(
      problems(() => resolveInputs(m, { lo: 1, hi: 4, any: 1.5 })).map((p) => p.message),
    ).toEqual([
      'must be a number of at least 2',
      'must be a number of at most 3',
      'must be an integer',
    ]);
    expect(resolveInputs(m, { any: -9007199254740991 })).toEqual({ any: -9007199254740991 });
  });
});

describe('toggle and enum', () => {
  it.each(['yes', 'true', 1, 0, [true]])('refuses bgm %j', (v) => {
    expect(badA({ bgm: v })).toEqual([{ field: 'inputs.bgm', message: 'must be true or false' }]);
  });
  it('takes enum numbers as numbers only', () => {
    expect(resolveInputs(B, { ...baseB, duration: 10 }).duration).toBe(10);
    for (const v of ['5', '10', 7, 5.0001, true]) {
      expect(badB({ duration: v })).toEqual([
        { field: 'inputs.duration', message: 'must be one of 5, 10' },
      ]);
    }
  });
  it('takes enum strings exactly', () => {
    expect(resolveInputs(A, { ...baseA, resolution: '1080p' }).resolution).toBe('1080p');
    for (const v of ['4k', '720P', ' 720p', 720]) {
      expect(badA({ resolution: v })).toEqual([
        { field: 'inputs.resolution', message: 'must be one of "540p", "720p", "1080p"' },
      ]);
    }
  });
});

describe('text', () => {
  it('counts code points, not UTF-16 units', () => {
    const emoji = '😀'.repeat(2000); // 4000 UTF-16 units
    expect(resolveInputs(B, { ...baseB, prompt: emoji }).prompt).toBe(emoji);
    expect(badB({ prompt: `${emoji}x` })).toEqual([
      { field: 'inputs.prompt', message: 'must be at most 2000 characters' },
    ]);
    expect(resolveInputs(B, { ...baseB, prompt: 'é'.repeat(2000) }).prompt).toHaveLength(2000);
  });
  it('refuses empty required text, NUL, lone surrogates and non-strings', () => {
    expect(badB({ prompt: '' })).toEqual([
      { field: 'inputs.prompt', message: 'must not be empty' },
    ]);
    expect(badB({ prompt: 'a\u0000b' })[0].message).toBe('must not contain NUL characters');
    expect(badB({ prompt: 'a\ud800b' })[0].message).toBe('must be valid Unicode text');
    for (const v of [5, true, ['a'], { a: 1 }])
      expect(badB({ prompt: v })[0].message).toBe('must be a string');
  });
  it('accepts empty optional text', () => {
    expect(resolveInputs(B, { ...baseB, negative_prompt: '' }).negative_prompt).toBe('');
  });
});

describe('url', () => {
  const long = (n: number) =>
    `https://example.com/${'a'.repeat(n - 'https://example.com/'.length)}`;
  it.each([
    'https://example.com/a.png',
    'HTTP://EXAMPLE.COM/A.PNG',
    'http://127.0.0.1:8080/x?y=1#z',
    'http://[::1]/a.png',
    'https://ex.com/%20a.png',
    long(2048),
  ])('accepts %s', (url) => {
    expect(resolveInputs(B, { ...baseB, image: url }).image).toBe(url);
  });
  it.each([
    '/a.png',
    'a.png',
    '//example.com/a.png',
    'example.com/a.png',
    'ftp://example.com/a.png',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:image/png;base64,AAAA',
    'http://',
    'https://',
    'http:example.com',
    'http:/example.com',
    ' https://example.com/a.png',
    'https://exa mple.com/',
    'https://example.com/a\n.png',
    'http://example.com\\a.png',
    'http://:80/',
    'not a url',
    '',
    5,
    true,
    ['https://e.com/'],
  ])('refuses %j', (url) => {
    expect(badB({ image: url })).toEqual([
      { field: 'inputs.image', message: 'must be an absolute http or https URL' },
    ]);
  });
  it('refuses more than 2048 characters and credentials', () => {
    expect(badB({ image: long(2049) })[0].message).toBe('must be at most 2048 characters');
    for (const u of [
      'https://user:pass@example.com/a.png',
      'https://user@example.com/a.png',
      'https://:p@example.com/',
    ]) {
      expect(badB({ image: u })[0].message).toBe('must not contain credentials (user:password@)');
    }
  });
});

describe('request bodies', () => {
  it('parses a valid body', () => {
    const r = parseRenderRequest(catalog, { modelId: MODEL_B, inputs: baseB });
    expect(r.model).toBe(B);
    expect(r.inputs).toEqual({ ...baseB, guidance_scale: 0.5, duration: 5 });
    expect(validateRequestBody({ modelId: MODEL_B, inputs: {} })).toEqual({
      modelId: MODEL_B,
      inputs: {},
    });
  });
  it.each([null, [], 'x', 1])(
    'refuses a body %j that is not an object as INVALID_REQUEST',
    (body) => {
      expect(() => parseRenderRequest(catalog, body)).toThrowError(
        expect.objectContaining({ code: 'INVALID_REQUEST' }),
      );
      expect(() => validateRequestBody(body)).toThrowError(
        expect.objectContaining({ code: 'INVALID_REQUEST' }),
      );
    },
  );
  it('names modelId and inputs together', () => {
    expect(problems(() => parseRenderRequest(catalog, {}))).toEqual([
      { field: 'modelId', message: 'is required' },
      { field: 'inputs', message: 'is required' },
    ]);
    expect(problems(() => parseRenderRequest(catalog, { modelId: 5, inputs: [] }))).toEqual([
      { field: 'modelId', message: 'must be a string' },
      { field: 'inputs', message: 'must be a JSON object' },
    ]);
    expect(
      problems(() => parseRenderRequest(catalog, { modelId: 'nobody/nothing', inputs: [] })),
    ).toEqual([
      { field: 'modelId', message: 'unknown model "nobody/nothing"' },
      { field: 'inputs', message: 'must be a JSON object' },
    ]);
    expect(problems(() => validateRequestBody({ modelId: MODEL_B }))).toEqual([
      { field: 'inputs', message: 'is required' },
    ]);
  });
  it('reports unknown models without consulting the prototype', () => {
    for (const id of ['__proto__', 'constructor', '']) {
      expect(
        problems(() => parseRenderRequest(catalog, { modelId: id, inputs: {} }))[0].field,
      ).toBe('modelId');
    }
  });
  it('reports the inputs problems of a known model', () => {
    expect(
      problems(() =>
        parseRenderRequest(catalog, { modelId: MODEL_B, inputs: { ...baseB, duration: 7 } }),
      ),
    ).toEqual([{ field: 'inputs.duration', message: 'must be one of 5, 10' }]);
  });
});
