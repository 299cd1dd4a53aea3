// docs/api.md "HTTP details": 405 with Allow and OPTIONS 204 on known paths, Idempotency-Key as an
// RFC 8941 item (parameters ignored, a malformed string refused), If-Match on /content, the public
// OpenAPI documents readable from any origin (keyed routes granting none), /openai/v1's 401 with
// its challenge and a model `created` fixed across restarts, and addresses that can never be reached
// refused when they are given, on a server that refuses private addresses as production runs.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { client, startTestService } from '../../helpers/service.ts';

const f = serviceFixture({ env: { RENDERGATE_ALLOW_PRIVATE_URLS: '0' } });
const TEXT = { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } };
const create = (key: string, idem: string, body: object = TEXT) =>
  f.api.call('POST', '/v1/generations', { key, body, headers: { 'idempotency-key': idem } });
const raw = (method: string, path: string, headers: Record<string, string> = {}) =>
  fetch(f.svc.base + path, { method, headers });

describe('405 and OPTIONS', () => {
  it('a known path with another method is 405 naming what it takes; an unknown one stays 404', async () => {
    const { key } = await f.api.account(0);
    const auth = { authorization: `Bearer ${key}` };
    const put = await raw('PUT', '/v1/generations', auth);
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    expect(await put.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
    const del = await raw('POST', '/v1/generations/gen_x/content', auth);
    expect([del.status, del.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS']);
    const opt = await raw('OPTIONS', '/v1/generations/gen_x', auth);
    expect([opt.status, opt.headers.get('allow')]).toEqual([204, 'GET, HEAD, DELETE, OPTIONS']);
    expect(opt.headers.get('access-control-allow-origin')).toBeNull(); // keyed: no CORS
    expect((await raw('PUT', '/v1/nothing-here', auth)).status).toBe(404);
    // Keyed scopes check the key first, as for an unknown route.
    expect((await raw('PUT', '/v1/generations')).status).toBe(401);
    const oa = await raw('GET', '/openai/v1/chat/completions', auth);
    expect([oa.status, oa.headers.get('allow')]).toEqual([405, 'POST, OPTIONS']);
    expect((await oa.json()).error.code).toBe('METHOD_NOT_ALLOWED');
    expect((await raw('DELETE', '/healthz')).status).toBe(405);
  });
});

describe('Idempotency-Key as a structured field', () => {
  it('parameters are ignored: "K";x=1 replays "K" and K, one charge', async () => {
    const a = await f.api.account(1000);
    const k = crypto.randomUUID();
    const first = await create(a.key, `"${k}"`);
    const withParams = await create(a.key, `"${k}";x=1;y=?0`);
    const bare = await create(a.key, k);
    expect(first.status).toBe(202);
    expect([withParams.json.id, bare.json.id]).toEqual([first.json.id, first.json.id]);
    expect(withParams.headers.get('idempotent-replayed')).toBe('true');
    const me = await f.api.call('GET', '/v1/me', { key: a.key });
    expect(me.json.balanceCents).toBe(1000 - first.json.costCents);
  });

  it('a value that starts as a string and does not parse is refused, bare tokens still pass', async () => {
    const a = await f.api.account(1000);
    for (const bad of ['"K', '"K"junk', '"K";X=1', '"K";x=', '""']) {
      const r = await create(a.key, bad);
      expect([bad, r.status, r.json.code]).toEqual([bad, 400, 'IDEMPOTENCY_KEY_REQUIRED']);
    }
    const chat = await f.api.call('POST', '/openai/v1/chat/completions', {
      key: a.key,
      body: { model: 'rendergate/shot-list', messages: [{ role: 'user', content: 'hi' }] },
      headers: { 'idempotency-key': '"K";;' },
    });
    expect([chat.status, chat.json.error.code]).toEqual([400, 'IDEMPOTENCY_KEY_REQUIRED']);
    expect((await create(a.key, `tok;x=1-${crypto.randomUUID()}`)).status).toBe(202);
  });
});

describe('If-Match on content', () => {
  it('the current ETag (or *) downloads; another is 412', async () => {
    const a = await f.api.account(1000);
    const png = await (await fetch(f.img.url('/a.png'))).arrayBuffer();
    const up = await fetch(`${f.svc.base}/v1/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'image/png' },
      body: new Uint8Array(png),
    });
    const u = (await up.json()) as { url: string };
    const made = await create(a.key, crypto.randomUUID(), {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'a harbour', image: u.url },
    });
    expect(made.status).toBe(202);
    const done = await f.api.waitFinal(a.key, made.json.id);
    expect(done.status).toBe('succeeded');
    const path = `/v1/generations/${done.id}/content`;
    const auth = { authorization: `Bearer ${a.key}` };
    const head = await raw('GET', path, auth);
    const etag = head.headers.get('etag')!;
    expect((await raw('GET', path, { ...auth, 'if-match': etag })).status).toBe(200);
    expect((await raw('GET', path, { ...auth, 'if-match': `"x", ${etag}` })).status).toBe(200);
    expect((await raw('GET', path, { ...auth, 'if-match': '*' })).status).toBe(200);
    const weak = await raw('GET', path, { ...auth, 'if-match': `W/${etag}` });
    expect(weak.status).toBe(412);
    const other = await raw('GET', path, { ...auth, 'if-match': '"other"' });
    expect([other.status, (await other.json()).code]).toEqual([412, 'PRECONDITION_FAILED']);
  });
});

describe('the public documents', () => {
  it.each(['/v1/openapi.json', '/admin/v1/openapi.json'])(
    '%s answers any origin, preflight 204, no key needed',
    async (path) => {
      const r = await raw('GET', path, { origin: 'https://editor.example' });
      expect([r.status, r.headers.get('access-control-allow-origin')]).toEqual([200, '*']);
      expect((await r.json()).openapi).toMatch(/^3\.1/);
      const pre = await raw('OPTIONS', path, {
        origin: 'https://editor.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-tool',
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      expect(pre.headers.get('access-control-allow-headers')).toBe('x-tool');
    },
  );

  it('keyed routes grant no origin', async () => {
    const { key } = await f.api.account(0);
    const r = await raw('GET', '/v1/me', {
      authorization: `Bearer ${key}`,
      origin: 'https://x.example',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('/openai/v1', () => {
  it('a 401 carries WWW-Authenticate: Bearer', async () => {
    const none = await raw('GET', '/openai/v1/models');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="rendergate"');
    const bad = await raw('GET', '/openai/v1/models', { authorization: 'Bearer rg_live_nope' });
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer realm="rendergate", error=/);
  });

  it("a model's created is the same after a restart", async () => {
    const { key } = await f.api.account(0);
    const list = async () =>
      (await f.api.call('GET', '/openai/v1/models', { key })).json.data.map((m: any) => m.created);
    const before = await list();
    // Another process on the same database, started later: the same times.
    const later = await startTestService(f.dbh.url, {
      env: { RENDERGATE_ALLOW_PRIVATE_URLS: '0' },
    });
    try {
      const again = await client(later.base).call('GET', '/openai/v1/models', { key });
      expect(again.json.data.map((m: any) => m.created)).toEqual(before);
    } finally {
      await later.stop();
    }
    expect(before[0]).toBe(1_735_689_600);
  });
});

describe('addresses checked when given', () => {
  it('a webhook URL naming a private address literally is 400 naming url; a host name is kept', async () => {
    const { key } = await f.api.account(0);
    for (const url of [
      'http://127.0.0.1:9/h',
      'http://[::1]/h',
      'http://10.0.0.7/h',
      'http://127.1/h',
    ]) {
      const r = await f.api.call('POST', '/v1/webhook-endpoints', { key, body: { url } });
      expect([url, r.status, r.json.code, r.json.details[0].field]).toEqual([
        url,
        400,
        'INVALID_INPUT',
        'url',
      ]);
    }
    const named = await f.api.call('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'https://hooks.example/h' },
    });
    expect(named.status).toBe(201);
  });

  it('an image URL naming a private address literally is 400 before any charge', async () => {
    const a = await f.api.account(1000);
    const r = await create(a.key, crypto.randomUUID(), {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'p', image: 'http://169.254.169.254/latest/meta-data/' },
    });
    expect([r.status, r.json.code, r.json.details]).toEqual([
      400,
      'INVALID_INPUT',
      [{ field: 'inputs.image', message: expect.stringContaining('link-local') }],
    ]);
    expect((await f.api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(1000);
    await checkInvariants(f.dbh.db);
  });
});
