// Hostile request bodies at every endpoint that takes one (issue 5): arbitrary JSON, a wrong value in
// every field of an otherwise valid body, raw body text (duplicate keys, deep nesting, prototype keys,
// odd number literals, lone surrogates as raw bytes, NUL, ~900 KB strings), and valid-looking renders
// whose money must add up afterwards. Every answer is checked against the contract (harness.ts).
import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../helpers/invariants.ts';
import {
  ADMIN,
  STATUS,
  check,
  hostileJson,
  oddNumber,
  oddNumberText,
  oddString,
  sendChecked,
  startHostile,
  type Hostile,
} from './harness.ts';

let h: Hostile;
let genId: string; // a queued generation of the hostile account, for the id-taking endpoints
beforeAll(async () => {
  h = await startHostile();
  const r = await sendChecked(
    h.svc.base,
    {
      method: 'POST',
      path: '/v1/generations',
      body: JSON.stringify({ modelId: TEXT, inputs: { text: 'hello' } }),
      headers: {
        authorization: `Bearer ${h.key}`,
        'content-type': 'application/json',
        'idempotency-key': crypto.randomUUID(),
      },
    },
    [202],
  );
  genId = JSON.parse(r.text).id;
});
afterAll(async () => {
  await h?.stop();
});

const TEXT = 'rendergate/shot-list';
const A = 'rendergate/start-end-to-video';
const B = 'rendergate/image-to-video';
const VALID_INPUTS: Record<string, Record<string, unknown>> = {
  [TEXT]: { text: 'A lighthouse at dusk. Waves below.', mode: 'shot_list', max_items: 3 },
  [A]: {
    prompt: 'a fox runs',
    image: 'https://example.com/a.png',
    last_image: 'https://example.com/b.png',
    duration: 2,
    resolution: '540p',
    bgm: false,
    movement_amplitude: 'small',
    seed: 7,
  },
  [B]: {
    prompt: 'a lighthouse',
    image: 'https://example.com/a.png',
    negative_prompt: 'blur',
    guidance_scale: 0.25,
    duration: 5,
  },
};

interface Target {
  name: string;
  method: string;
  path: () => string;
  allowed: readonly number[];
  admin?: boolean;
  idem?: boolean;
  base: () => Record<string, unknown>;
}
const email = () => `h-${crypto.randomBytes(6).toString('hex')}@example.test`;
const TARGETS: Target[] = [
  {
    name: 'quote',
    method: 'POST',
    path: () => '/v1/quote',
    allowed: STATUS.quote,
    base: () => ({ modelId: TEXT, inputs: { ...VALID_INPUTS[TEXT] } }),
  },
  {
    name: 'create',
    method: 'POST',
    path: () => '/v1/generations',
    allowed: STATUS.create,
    idem: true,
    base: () => ({ modelId: TEXT, inputs: { ...VALID_INPUTS[TEXT] } }),
  },
  {
    name: 'admin accounts',
    method: 'POST',
    path: () => '/admin/v1/accounts',
    allowed: STATUS.adminCreateAccount,
    admin: true,
    base: () => ({ email: email(), name: 'Hostile' }),
  },
  {
    name: 'admin credits',
    method: 'POST',
    path: () => `/admin/v1/accounts/${h.accountId}/credits`,
    allowed: STATUS.adminCredits,
    admin: true,
    base: () => ({ amountCents: 1, reason: 'test' }),
  },
  {
    name: 'admin keys',
    method: 'POST',
    path: () => `/admin/v1/accounts/${h.accountId}/keys`,
    allowed: STATUS.adminKeys,
    admin: true,
    base: () => ({ name: 'k', dailyCapCents: null, rateLimitPerMinute: 60 }),
  },
  {
    name: 'admin refund',
    method: 'POST',
    path: () => `/admin/v1/generations/${genId}/refund`,
    allowed: STATUS.adminRefund,
    admin: true,
    base: () => ({}),
  },
  {
    name: 'admin revoke',
    method: 'DELETE',
    path: () => '/admin/v1/keys/key_00000000000000000000000000000000',
    allowed: STATUS.adminRevoke,
    admin: true,
    base: () => ({}),
  },
  {
    name: 'delete',
    method: 'DELETE',
    path: () => '/v1/generations/gen_00000000000000000000000000000000',
    allowed: STATUS.del,
    base: () => ({}),
  },
];

function headersFor(t: Target, contentType = 'application/json'): Record<string, string> {
  return {
    authorization: `Bearer ${t.admin ? ADMIN : h.key}`,
    'content-type': contentType,
    ...(t.idem ? { 'idempotency-key': crypto.randomUUID() } : {}),
  };
}

describe('arbitrary JSON bodies', () => {
  it('any JSON value at every body endpoint is answered inside the contract', async () => {
    await check(
      'json value',
      fc.tuple(fc.constantFrom(...TARGETS), hostileJson),
      async ([t, v]) => {
        await sendChecked(
          h.svc.base,
          {
            method: t.method,
            path: t.path(),
            headers: headersFor(t),
            body: JSON.stringify(v) ?? 'null',
          },
          t.allowed,
        );
      },
      300,
    );
  });

  it('fc.anything() mapped to JSON (toJSON, sparse arrays, boxed values, -0, odd keys) is answered inside the contract', async () => {
    const anything = fc.anything({
      withBoxedValues: true,
      withSparseArray: true,
      withNullPrototype: true,
      withObjectString: true,
      maxDepth: 3,
      key: oddString(8),
    });
    await check(
      'anything',
      fc.tuple(fc.constantFrom(...TARGETS), anything),
      async ([t, v]) => {
        let body: string | undefined;
        try {
          body = JSON.stringify(v);
        } catch {
          body = undefined;
        } // BigInt: not JSON
        await sendChecked(
          h.svc.base,
          { method: t.method, path: t.path(), headers: headersFor(t), body: body ?? '{}' },
          t.allowed,
        );
      },
      150,
    );
  });

  it('inputs of arbitrary JSON for every model: 200 or 400 INVALID_INPUT, never anything else', async () => {
    const inputs = fc.oneof(hostileJson, fc.dictionary(oddString(16), hostileJson, { maxKeys: 8 }));
    await check(
      'inputs',
      fc.tuple(fc.constantFrom(TEXT, A, B), inputs),
      async ([modelId, v]) => {
        const r = await sendChecked(
          h.svc.base,
          {
            method: 'POST',
            path: '/v1/quote',
            headers: headersFor(TARGETS[0]),
            body: JSON.stringify({ modelId, inputs: v }),
          },
          [200, 400],
        );
        if (r.status === 400) expect(JSON.parse(r.text).code).toBe('INVALID_INPUT');
      },
      200,
    );
  });
});

// One field of a valid body replaced (or removed): only that field may be named as invalid.
type Mutation = { t: Target; modelId: string; field: string; value: unknown };
const FIELDS: Record<string, string[]> = {
  quote: ['modelId', 'inputs'],
  create: ['modelId', 'inputs'],
  'admin accounts': ['email', 'name'],
  'admin credits': ['amountCents', 'reason'],
  'admin keys': ['name', 'dailyCapCents', 'rateLimitPerMinute'],
};
const REMOVE = Symbol('remove');
const wrongValue = fc.oneof(
  fc.constant<unknown>(REMOVE),
  fc.constant(null),
  fc.boolean(),
  oddNumber,
  oddString(60),
  hostileJson,
  fc.constantFrom('5', '', ' ', 'true', '1e308', '0x10', 'NaN', 'Infinity', [], {}, [5], {
    value: 5,
  }),
  fc.integer({ min: 1, max: 5 }).map((n) => 'x'.repeat(n * 1000)),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc
    .tuple(fc.constantFrom(...TARGETS.filter((t) => FIELDS[t.name])), fc.nat(), wrongValue)
    .map(([t, i, value]) => {
      const fields = FIELDS[t.name];
      return { t, modelId: TEXT, field: fields[i % fields.length], value };
    }),
  fc
    .tuple(
      fc.constantFrom(TARGETS[0], TARGETS[1]),
      fc.constantFrom(TEXT, A, B),
      fc.nat(),
      wrongValue,
    )
    .map(([t, modelId, i, value]) => {
      const names = Object.keys(VALID_INPUTS[modelId]);
      return { t, modelId, field: `inputs.${names[i % names.length]}`, value };
    }),
);

describe('a wrong value in every field', () => {
  it('names only the field that was changed, and never fails otherwise', async () => {
    await check(
      'wrong field',
      mutation,
      async ({ t, modelId, field, value }) => {
        const body = t.base();
        if (body.modelId !== undefined) {
          body.modelId = modelId;
          body.inputs = { ...VALID_INPUTS[modelId] };
        }
        const [top, sub] = field.split('.');
        const holder = (sub ? body[top] : body) as Record<string, unknown>;
        const name = sub ?? top;
        if (value === REMOVE) delete holder[name];
        else holder[name] = value;
        const r = await sendChecked(
          h.svc.base,
          { method: t.method, path: t.path(), headers: headersFor(t), body: JSON.stringify(body) },
          t.allowed,
        );
        if (r.status === 400) {
          const e = JSON.parse(r.text);
          expect(e.code, r.text).toBe('INVALID_INPUT');
          for (const d of e.details)
            expect(
              d.field === field ||
                String(d.field).startsWith(`${field}.`) ||
                (field === 'modelId' && d.field === 'inputs'),
              r.text,
            ).toBe(true);
        }
        if (r.status < 300 && t.name === 'quote') {
          const q = JSON.parse(r.text);
          expect(Number.isSafeInteger(q.costCents) && q.costCents >= 0, r.text).toBe(true);
        }
      },
      300,
    );
  });
});

// --- raw body text ------------------------------------------------------------------------------------------

const nest = (n: number, open: string, close: string, inner = '1') =>
  open.repeat(n) + inner + close.repeat(n);
const validText = JSON.stringify({ modelId: TEXT, inputs: VALID_INPUTS[TEXT] });
const rawBodies: fc.Arbitrary<Buffer> = fc
  .oneof(
    // duplicate keys, at the top and inside inputs
    fc
      .tuple(fc.constantFrom('"modelId"', '"inputs"', '"email"', '"amountCents"'), hostileJson)
      .map(
        ([k, v]) =>
          `{${k}:${JSON.stringify(v) ?? 'null'},"modelId":"${TEXT}","inputs":{"text":"a","text":${JSON.stringify(v) ?? 'null'}},${k}:1,"email":"d@example.test","amountCents":5}`,
      ),
    // deep nesting, shallow to 10k levels, objects and arrays, at the top and inside inputs
    fc
      .tuple(
        fc.integer({ min: 1, max: 10_000 }),
        fc.boolean(),
        fc.constantFrom('top', 'inputs', 'extra'),
      )
      .map(([n, arr, where]) => {
        const deep = arr ? nest(n, '[', ']') : nest(n, '{"a":', '}');
        return where === 'inputs'
          ? `{"modelId":"${TEXT}","inputs":{"text":"a","x":${deep}}}`
          : where === 'extra'
            ? `{"modelId":"${TEXT}","inputs":{"text":"a"},"extra":${deep},"email":"x@example.test","amountCents":1}`
            : deep;
      }),
    fc.constant(`{"modelId":"${TEXT}","inputs":{"text":"a"},"extra":${nest(150_000, '[', ']')}}`),
    fc
      .integer({ min: 60, max: 70 })
      .map((n) => `{"modelId":"${TEXT}","inputs":{"text":"a"},"extra":${nest(n - 2, '[', ']')}}`),
    // prototype keys, plain and escaped
    fc.constantFrom(
      '{"__proto__":{"isAdmin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"a":{"__proto__":null}}',
      '{"\\u005f_proto__":{"x":1}}',
      `{"modelId":"${TEXT}","inputs":{"text":"a","__proto__":{"text":"b"}}}`,
      `{"modelId":"${TEXT}","inputs":{"text":"a","constructor":{"prototype":{}}}}`,
      '{"constructor":1}',
      '{"constructor":{"prototype":1}}',
      '{"email":"c@example.test","constructor":{"name":"x"}}',
      '[{"__proto__":{}}]',
    ),
    // number literals JSON.stringify never writes, in every numeric field
    fc
      .tuple(
        fc.constantFrom(
          'max_items',
          'amountCents',
          'dailyCapCents',
          'rateLimitPerMinute',
          'duration',
        ),
        oddNumberText,
      )
      .map(([k, n]) => `{"modelId":"${TEXT}","inputs":{"text":"a","${k}":${n}},"${k}":${n}}`),
    // broken JSON
    fc.constantFrom(
      '',
      ' ',
      '{',
      '}',
      '{"a":',
      '{"a" 1}',
      "{'a':1}",
      '{a:1}',
      '{"a":1,}',
      '[1,]',
      'nul',
      'NaN',
      'Infinity',
      '-',
      '01',
      '1.',
      '.5',
      '"\\x41"',
      '"\\u12"',
      '{"a":"\\ud800"}',
      '\ufeff{}',
      `${validText}x`,
      `${validText}${validText}`,
      `${validText}\u0000`,
      '{}{}',
      'null',
      'true',
      '7',
      '"s"',
      '[]',
      '/* c */ {}',
      '{"a":1} // c',
      '\u00a0{}',
      '{"a":"\u0001"}',
    ),
    // NUL and unicode oddities in keys and values, escaped (valid JSON) and raw (control chars are invalid JSON)
    fc.tuple(oddString(30), oddString(10)).map(([v, k]) =>
      JSON.stringify({
        modelId: TEXT,
        inputs: { text: v, [k]: v },
        [k]: v,
        email: `${v}@x.test`,
        name: v,
        reason: v,
      }),
    ),
    fc.constantFrom(
      `{"modelId":"${TEXT}","inputs":{"text":"a\u0000b"}}`,
      `{"modelId":"${TEXT}\u0000","inputs":{"text":"a"}}`,
      '{"email\u0000":"a@b.c"}',
    ),
    // many names: an answer naming every unknown one must stay bounded
    fc
      .tuple(fc.integer({ min: 90, max: 60_000 }), fc.integer({ min: 1, max: 300 }), fc.boolean())
      .map(([n, len, inInputs]) => {
        const names = Array.from(
          { length: n },
          (_, i) => `"${String(i).padStart(len, 'k')}":1`,
        ).join(',');
        return inInputs
          ? `{"modelId":"${TEXT}","inputs":{"text":"a",${names}}}`
          : `{${names},"modelId":"${TEXT}","inputs":{"text":"a"},"email":"n@example.test","amountCents":1}`;
      }),
  )
  .map((s) => Buffer.from(s, 'utf8'));
// invalid UTF-8 as raw bytes: lone surrogate halves (CESU), overlongs, truncated sequences, 0xFF
const badUtf8 = fc
  .tuple(
    fc.constantFrom(
      'ed a0 80',
      'ed bf bf',
      'c0 af',
      'e0 80 af',
      'f8 88 80 80 80',
      'ff',
      'fe',
      'c3',
      'e2 82',
      'f0 9f 98',
      '00',
    ),
    fc.constantFrom('value', 'key', 'modelId', 'email'),
  )
  .map(([hex, where]) => {
    const b = Buffer.from(hex.replace(/ /g, ''), 'hex').toString('latin1');
    const s =
      where === 'value'
        ? `{"modelId":"${TEXT}","inputs":{"text":"a${b}b"}}`
        : where === 'key'
          ? `{"modelId":"${TEXT}","inputs":{"te${b}xt":"a"}}`
          : where === 'modelId'
            ? `{"modelId":"rendergate/${b}","inputs":{}}`
            : `{"email":"a${b}@example.test","amountCents":1}`;
    return Buffer.from(s, 'latin1');
  });
// very long strings up to ~900 KB, in a field value, a key, and modelId
const longStrings = fc
  .tuple(
    fc.integer({ min: 1, max: 900 }),
    fc.constantFrom('value', 'key', 'modelId', 'url', 'email'),
    fc.constantFrom('a', 'é', '😀', '\\u0000', '\u200b'),
  )
  .map(([kb, where, unit]) => {
    const s = unit.repeat(Math.floor((kb * 1000) / Buffer.byteLength(unit)));
    const body =
      where === 'value'
        ? `{"modelId":"${TEXT}","inputs":{"text":"${s}"}}`
        : where === 'key'
          ? `{"modelId":"${TEXT}","inputs":{"${s}":1}}`
          : where === 'modelId'
            ? `{"modelId":"${s}","inputs":{}}`
            : where === 'url'
              ? `{"modelId":"${B}","inputs":{"prompt":"p","image":"https://e.com/${s}"}}`
              : `{"email":"${s}@example.test","name":"${s}","reason":"${s}","amountCents":1}`;
    return Buffer.from(body, 'utf8');
  });

describe('raw body text', () => {
  it('duplicate keys, deep nesting, prototype keys, odd numbers, broken JSON, NUL and bad UTF-8 are answered inside the contract', async () => {
    await check(
      'raw body',
      fc.tuple(fc.constantFrom(...TARGETS), fc.oneof(rawBodies, badUtf8)),
      async ([t, body]) => {
        await sendChecked(
          h.svc.base,
          { method: t.method, path: t.path(), headers: headersFor(t), body },
          t.allowed,
        );
      },
      300,
    );
  });

  it('strings up to ~900 KB in values, keys, modelId and URLs are answered inside the contract', async () => {
    await check(
      'long strings',
      fc.tuple(fc.constantFrom(...TARGETS.slice(0, 4)), longStrings),
      async ([t, body]) => {
        await sendChecked(
          h.svc.base,
          { method: t.method, path: t.path(), headers: headersFor(t), body },
          t.allowed,
        );
      },
      60,
    );
  });
});

describe('limits', () => {
  const quote = (body: string) =>
    sendChecked(
      h.svc.base,
      { method: 'POST', path: '/v1/quote', headers: headersFor(TARGETS[0]), body },
      STATUS.quote,
    );

  it('a body nested deeper than 64 levels is 400 INVALID_REQUEST; 64 levels still parse', async () => {
    const at = (depth: number) =>
      `{"modelId":"${TEXT}","inputs":{"text":"a"},"x":${nest(depth - 1, '[', ']')}}`;
    expect((await quote(at(64))).status).toBe(200);
    for (const depth of [65, 1000, 10_000, 200_000]) {
      const r = await quote(at(depth));
      expect([r.status, JSON.parse(r.text).code], `depth ${depth}`).toEqual([
        400,
        'INVALID_REQUEST',
      ]);
    }
    const inStrings = `{"modelId":"${TEXT}","inputs":{"text":"${'[{'.repeat(500)}"}}`;
    expect((await quote(inStrings)).status).toBe(200); // brackets inside strings are not nesting
  });

  it("prototype keys are refused like Fastify's secure parser does", async () => {
    for (const body of [
      '{"__proto__":{"x":1}}',
      '{"a":[{"__proto__":{}}]}',
      '{"\\u005f\\u005fproto__":1}',
      '{"constructor":{"prototype":{}}}',
    ]) {
      const r = await quote(body);
      expect([r.status, JSON.parse(r.text).code], body).toEqual([400, 'INVALID_REQUEST']);
    }
    expect(
      (await quote(`{"modelId":"${TEXT}","inputs":{"text":"a"},"constructor":{"name":"x"}}`))
        .status,
    ).toBe(200);
  });

  it('a body that is not UTF-8 (lone surrogate halves, overlongs, truncated sequences, Latin-1) is 400 INVALID_REQUEST', async () => {
    for (const hex of ['eda080', 'c0af', 'e282', 'ff', 'e9']) {
      const body = Buffer.concat([
        Buffer.from(`{"modelId":"${TEXT}","inputs":{"text":"a`),
        Buffer.from(hex, 'hex'),
        Buffer.from('"}}'),
      ]);
      const r = await sendChecked(
        h.svc.base,
        {
          method: 'POST',
          path: '/v1/quote',
          headers: headersFor(TARGETS[0], 'application/json; charset=latin1'),
          body,
        },
        [400],
      );
      expect(JSON.parse(r.text).code, hex).toBe('INVALID_REQUEST');
    }
    expect((await quote(`{"modelId":"${TEXT}","inputs":{"text":"é😀\u200b\u202e"}}`)).status).toBe(
      200,
    );
  });

  it('inputs with more than 100 names is 400 INVALID_INPUT naming inputs', async () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, i]));
    const r = await quote(JSON.stringify({ modelId: TEXT, inputs: { text: 'a', ...many } }));
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({
      code: 'INVALID_INPUT',
      details: [{ field: 'inputs' }],
    });
  });

  it('admin text with a lone surrogate or NUL is refused, not stored altered; unknown names are echoed at most 50 times', async () => {
    for (const body of [
      '{"email":"s\\ud800@example.test"}',
      '{"email":"a@example.test","name":"x\\udfff"}',
      '{"email":"b@example.test","name":"x\\u0000"}',
    ]) {
      const r = await sendChecked(
        h.svc.base,
        { method: 'POST', path: '/admin/v1/accounts', headers: headersFor(TARGETS[2]), body },
        [400],
      );
      expect(JSON.parse(r.text).details).toHaveLength(1);
    }
    const many = Object.fromEntries(
      Array.from({ length: 2000 }, (_, i) => [`${'n'.repeat(300)}${i}`, 1]),
    );
    const r = await sendChecked(
      h.svc.base,
      {
        method: 'POST',
        path: '/admin/v1/accounts',
        headers: headersFor(TARGETS[2]),
        body: JSON.stringify({ email: email(), ...many }),
      },
      [400],
    );
    const details = JSON.parse(r.text).details as Array<{ field: string }>;
    expect(details).toHaveLength(50);
    expect(Math.max(...details.map((d) => d.field.length))).toBeLessThanOrEqual(201);
  });

  it('a JSON null body for admin keys is INVALID_REQUEST, an absent one is an empty object', async () => {
    const path = `/admin/v1/accounts/${h.accountId}/keys`;
    const r = await sendChecked(
      h.svc.base,
      {
        method: 'POST',
        path,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: 'null',
      },
      STATUS.adminKeys,
    );
    expect([r.status, JSON.parse(r.text).code]).toEqual([400, 'INVALID_REQUEST']);
    expect(
      (
        await sendChecked(
          h.svc.base,
          { method: 'POST', path, headers: { authorization: `Bearer ${ADMIN}` } },
          STATUS.adminKeys,
        )
      ).status,
    ).toBe(201);
  });
});

// --- money ------------------------------------------------------------------------------------------

describe('valid-looking renders', () => {
  it('keep the money invariants: quote = charge, replays charge nothing, 402/409 change nothing', async () => {
    const poor = await h.api.account(150, { rateLimitPerMinute: 1_000_000 });
    const capped = await h.api.account(100_000, {
      rateLimitPerMinute: 1_000_000,
      dailyCapCents: 300,
    });
    const keys = [h.key, poor.key, capped.key];
    const idemPool = Array.from(
      { length: 12 },
      (_, i) => `idem-${i}-${crypto.randomBytes(3).toString('hex')}`,
    );
    const created: Array<{ key: string; id: string }> = [];

    const inputsFor = (modelId: string) =>
      fc.record(
        Object.fromEntries(
          Object.entries(VALID_INPUTS[modelId]).map(([k, v]) => [
            k,
            fc.oneof(
              { weight: 4, arbitrary: fc.constant(v) },
              { weight: 1, arbitrary: fc.constant(undefined) },
              {
                weight: 1,
                arbitrary:
                  typeof v === 'number'
                    ? oddNumber
                    : typeof v === 'string'
                      ? oddString(20)
                      : fc.boolean(),
              },
            ),
          ]),
        ),
        { requiredKeys: [] },
      );
    const createCmd = fc.record({
      kind: fc.constant('create' as const),
      key: fc.constantFrom(...keys),
      body: fc
        .constantFrom(TEXT, A, B)
        .chain((modelId) => inputsFor(modelId).map((inputs) => ({ modelId, inputs }))),
      idem: fc.oneof(fc.constantFrom(...idemPool), fc.uuid()),
    });
    const otherCmd = fc.record({
      kind: fc.constantFrom('delete' as const, 'refund' as const, 'get' as const),
      pick: fc.nat(),
    });
    const batch = fc.array(
      fc.oneof({ weight: 3, arbitrary: createCmd }, { weight: 1, arbitrary: otherCmd }),
      { minLength: 1, maxLength: 6 },
    );

    await check(
      'renders and money',
      batch,
      async (cmds) => {
        await Promise.all(
          cmds.map(async (c) => {
            if (c.kind === 'create') {
              const body = JSON.stringify(c.body);
              const q = await sendChecked(
                h.svc.base,
                {
                  method: 'POST',
                  path: '/v1/quote',
                  headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
                  body,
                },
                STATUS.quote,
              );
              const r = await sendChecked(
                h.svc.base,
                {
                  method: 'POST',
                  path: '/v1/generations',
                  body,
                  headers: {
                    authorization: `Bearer ${c.key}`,
                    'content-type': 'application/json',
                    'idempotency-key': c.idem,
                  },
                },
                STATUS.create,
              );
              if (q.status === 400) expect(r.status, r.text).toBe(400); // invalid inputs are refused the same on both
              if (r.status === 202) {
                const g = JSON.parse(r.text);
                created.push({ key: c.key, id: g.id });
                if (r.headers['idempotent-replayed'] !== 'true') {
                  expect(q.status).toBe(200);
                  const quoted = JSON.parse(q.text);
                  expect([g.costCents, g.inputs, g.status]).toEqual([
                    quoted.costCents,
                    quoted.inputs,
                    'queued',
                  ]);
                }
              }
              return;
            }
            const target = created[c.pick % Math.max(1, created.length)] ?? {
              key: h.key,
              id: 'gen_00000000000000000000000000000000',
            };
            if (c.kind === 'delete') {
              await sendChecked(
                h.svc.base,
                {
                  method: 'DELETE',
                  path: `/v1/generations/${target.id}`,
                  headers: { authorization: `Bearer ${target.key}` },
                },
                [200, 404],
              );
            } else if (c.kind === 'refund') {
              await sendChecked(
                h.svc.base,
                {
                  method: 'POST',
                  path: `/admin/v1/generations/${target.id}/refund`,
                  headers: { authorization: `Bearer ${ADMIN}` },
                },
                [404, 409],
              );
            } else {
              await sendChecked(
                h.svc.base,
                {
                  method: 'GET',
                  path: `/v1/generations/${target.id}`,
                  headers: { authorization: `Bearer ${target.key}` },
                },
                [200, 404],
              );
            }
          }),
        );
      },
      150,
    );
    expect(created.length).toBeGreaterThan(10);
    await checkInvariants(h.dbh.db);
  });
});
