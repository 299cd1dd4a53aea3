// The OpenAPI document: served without a key, valid OpenAPI 3.1 (checked by a maintained validator),
// complete (every error code, every model's inputs), in step with the input checks, and the drift check
// that client() runs on every answer really catches drift. Also the /docs reference page.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../../src/domain/errors.ts';
import fs from 'node:fs';
import { allErrorCodes } from '../../../src/http/openapi/errors.ts';
import { inputsComponent } from '../../../src/http/openapi/document.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkerFor } from '../../helpers/openapi-check.ts';

const f = serviceFixture();

describe('GET /v1/openapi.json', () => {
  it('is served without a key (and despite a bad one), and validates as OpenAPI 3.1', async () => {
    const anon = await fetch(f.svc.base + '/v1/openapi.json');
    expect(anon.status).toBe(200);
    expect(anon.headers.get('content-type')).toMatch(/^application\/json/);
    expect(anon.headers.get('x-request-id')).toBeTruthy();
    const doc = await anon.json();
    const bad = await fetch(f.svc.base + '/v1/openapi.json', {
      headers: { authorization: 'Bearer nope' },
    });
    expect(bad.status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0].url).toBe(f.svc.base);
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // The exception is narrow: everything else under /v1 still needs a key, unknown routes included.
    expect((await f.api.call('GET', '/v1/openapi.jsonx')).json.code).toBe('API_KEY_MISSING');
    expect((await f.api.call('POST', '/v1/openapi.json')).json.code).toBe('API_KEY_MISSING');
    expect((await f.api.call('GET', '/v1/me')).json.code).toBe('API_KEY_MISSING');
  });

  it('lists every error code at its status, and every operation of v1; every schema compiles', async () => {
    const checker = await checkerFor(f.svc.base);
    expect(await checker.compileAll()).toBeGreaterThan(50);
    const doc = checker.doc as any;
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(doc.components.schemas[`Error${status}`].properties.code.enum, code).toContain(code);
    }
    const ops = Object.entries(doc.paths).flatMap(([p, item]: [string, any]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops.sort()).toEqual(
      [
        'DELETE /v1/generations/{id}',
        'DELETE /v1/uploads/{id}',
        'DELETE /v1/webhook-endpoints/{id}',
        'GET /v1/generations',
        'GET /v1/generations/{id}',
        'GET /v1/generations/{id}/content',
        'GET /v1/generations/{id}/events',
        'GET /v1/me',
        'GET /v1/models',
        'GET /v1/models/detail',
        'GET /v1/openapi.json',
        'GET /v1/uploads',
        'GET /v1/uploads/{id}',
        'GET /v1/usage',
        'GET /v1/webhook-endpoints',
        'GET /v1/webhook-endpoints/{id}',
        'GET /v1/webhook-endpoints/{id}/deliveries',
        'POST /v1/generations',
        'POST /v1/generations/{id}/cancel',
        'POST /v1/quote',
        'POST /v1/uploads',
        'POST /v1/webhook-endpoints',
        'GET /openai/v1/models',
        'GET /openai/v1/models/{vendor}/{name}',
        'POST /openai/v1/chat/completions',
        'POST /openai/v1/responses',
        'POST /webhooks/stripe',
      ].sort(),
    );
    // docs/api.md, the reference in the repository, names every code and every path of the document.
    const md = fs.readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
    for (const code of Object.keys(allErrorCodes())) expect(md, code).toContain('`' + code + '`');
    for (const p of Object.keys(doc.paths)) expect(md, p).toContain(p.replace(/^\/v1/, ''));
    expect(Object.keys(doc.webhooks).sort()).toEqual([
      'account.balance_low',
      'budget.threshold_reached',
      'generation.failed',
      'generation.refunded',
      'generation.started',
      'generation.succeeded',
    ]);
  });

  it('catches drift: an unknown field, a missing one, an unlisted status, a missing header', async () => {
    const checker = await checkerFor(f.svc.base);
    const { key } = await f.api.account(0);
    const me = await f.api.call('GET', '/v1/me', { key });
    expect(checker.check('GET', '/v1/me', me.status, me.headers, me.text)).toEqual([]);
    const extra = JSON.stringify({ ...me.json, surprise: 1 });
    expect(checker.check('GET', '/v1/me', 200, me.headers, extra).join()).toMatch(
      /surprise|additional/,
    );
    const { balanceCents: _, ...missing } = me.json;
    expect(checker.check('GET', '/v1/me', 200, me.headers, JSON.stringify(missing)).join()).toMatch(
      /balanceCents/,
    );
    expect(checker.check('GET', '/v1/me', 418, me.headers, me.text).join()).toMatch(
      /status not in the document/,
    );
    const noId = new Headers(me.headers);
    noId.delete('x-request-id');
    expect(checker.check('GET', '/v1/me', 200, noId, me.text).join()).toMatch(
      /X-Request-Id missing/,
    );
    const wrongCode = JSON.stringify({ code: 'MODEL_NOT_FOUND', message: 'x', requestId: 'r' });
    expect(
      checker
        .check(
          'GET',
          '/v1/me',
          401,
          new Headers({ 'x-request-id': 'r', 'content-type': 'application/json' }),
          wrongCode,
        )
        .join(),
    ).toMatch(/code/);
  });

  it('gives each model its inputs as a JSON Schema, the same on /models/detail, agreeing with the input checks', async () => {
    const { key } = await f.api.account(0);
    const doc = (await checkerFor(f.svc.base)).doc as any;
    const ajv = new Ajv2020({ strict: false });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    for (const m of (await f.api.call('GET', '/v1/models', { key })).json.data) {
      const detail = await f.api.call('GET', `/v1/models/detail?id=${encodeURIComponent(m.id)}`, {
        key,
      });
      expect(detail.json.inputSchema).toEqual(doc.components.schemas[inputsComponent(m.id)]);
      expect(detail.json.inputSchema.additionalProperties).toBe(false);
    }
    const schema = ajv.compile(
      (await f.api.call('GET', '/v1/models/detail?id=rendergate/image-to-video', { key })).json
        .inputSchema,
    );
    const cases: Record<string, unknown>[] = [
      { prompt: 'a', image: 'https://example.com/a.png' },
      {
        prompt: 'a',
        image: 'https://example.com/a.png',
        duration: 10,
        guidance_scale: 1,
        negative_prompt: 'x',
      },
      { prompt: 'a', image: 'https://example.com/a.png', duration: 7 },
      { prompt: 'a', image: 'https://example.com/a.png', guidance_scale: 1.5 },
      { prompt: 'a', image: 'ftp://example.com/a.png' },
      { prompt: '', image: 'https://example.com/a.png' },
      { prompt: 'a' },
      { prompt: 'a', image: 'https://example.com/a.png', colour: 'red' },
      { prompt: 'x'.repeat(2001), image: 'https://example.com/a.png' },
      { prompt: 1, image: 'https://example.com/a.png' },
    ];
    for (const inputs of cases) {
      const q = await f.api.call('POST', '/v1/quote', {
        key,
        body: { modelId: 'rendergate/image-to-video', inputs },
      });
      expect(q.status === 200, JSON.stringify(inputs)).toBe(schema(inputs));
    }
  });
});

describe('/docs', () => {
  it('serves a reference page whose script comes from this origin only', async () => {
    const page = await fetch(f.svc.base + '/docs');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).toContain('spec-url="/v1/openapi.json"');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const js = await fetch(f.svc.base + '/docs/rapidoc-min.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    const body = await js.text();
    expect(body).toContain('rapi-doc');
  });
});
