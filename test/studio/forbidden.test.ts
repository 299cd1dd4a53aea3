// 403 FORBIDDEN where a person meets it: a studio page saying what is missing (no longer a bare
// "Refused"), the JSON body where a script reads the answer (the form's uploads), and the code in
// both OpenAPI documents. A session acts as its account's owner: what it may do still works.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { ADMIN } from '../helpers/service.ts';
import { StudioSession } from './http-session.ts';

const f = serviceFixture();

const count = async (sql: string, email: string) =>
  (
    await f.dbh.db.query<{ n: number }>(
      `${sql} WHERE account_id = (SELECT id FROM accounts WHERE email = $1)`,
      [email],
    )
  ).rows[0].n;

describe('the studio answers a refusal with a 403 page naming what is missing', () => {
  it('a form without its token, or from another origin: "Not allowed", what to do, nothing done', async () => {
    const s = new StudioSession(f.svc.base);
    const email = await s.signUp();
    await s.get('/keys');
    const other = `http://127.0.0.1:${Number(new URL(f.svc.base).port) + 1}`;
    for (const o of [{ csrf: 'forged' }, { csrf: null }, { origin: other }]) {
      const r = await s.post('/keys', { name: 'refused' }, o);
      expect(r.status, JSON.stringify(o)).toBe(403);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.text).toContain('<h1>Not allowed</h1>');
      expect(r.text).toContain('was not sent from this site');
      expect(r.text).toContain('Back to the studio');
    }
    expect(await count('SELECT count(*)::int AS n FROM api_keys', email)).toBe(0);
    // Signed in as the account's owner: the same form with its token creates the key.
    expect((await s.post('/keys', { name: 'mine' })).status).toBe(201);
    expect(await count('SELECT count(*)::int AS n FROM api_keys', email)).toBe(1);
  });

  it("an upload without the page's token: the API's JSON body, 403 FORBIDDEN, nothing stored", async () => {
    const s = new StudioSession(f.svc.base);
    const email = await s.signUp();
    await s.get('/models/rendergate/image-to-video');
    const png = await sharp({
      create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 10, b: 10 } },
    })
      .png()
      .toBuffer();
    const send = (token: string) =>
      fetch(`${f.svc.base}/uploads`, {
        method: 'POST',
        headers: {
          cookie: s.cookieHeader(),
          origin: f.svc.base,
          'content-type': 'image/png',
          'x-csrf-token': token,
        },
        body: png,
      });
    const refused = await send('forged');
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toEqual({
      code: 'FORBIDDEN',
      message:
        'This upload was not sent from this page, or the page has expired; reload it and try again.',
      requestId: expect.any(String),
    });
    expect(await count('SELECT count(*)::int AS n FROM uploads', email)).toBe(0);
    expect((await send(s.csrf)).status).toBe(201);
    expect(await count('SELECT count(*)::int AS n FROM uploads', email)).toBe(1);
  });
});

describe('FORBIDDEN in the OpenAPI documents', () => {
  it('the public one: in the closed list, a 403 response on every keyed /v1 operation', async () => {
    const doc = (await (await fetch(`${f.svc.base}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: object }>>;
      components: { schemas: Record<string, { enum?: string[] }> };
    };
    expect(doc.components.schemas.ErrorCode.enum).toContain('FORBIDDEN');
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        // public: no caller to refuse; OpenAI's: only chat completions start renders
        if (op.security?.length === 0 || path.startsWith('/openai/')) continue;
        expect(Object.keys(op.responses), `${method} ${path}`).toContain('403');
      }
  });

  it("the admin one: the same closed list (the operator's answers never carry it)", async () => {
    const r = await fetch(`${f.svc.base}/admin/v1/openapi.json`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const doc = (await r.json()) as {
      components: { schemas: { Error: { properties: { code: { enum: string[] } } } } };
    };
    expect(doc.components.schemas.Error.properties.code.enum).toContain('FORBIDDEN');
  });
});
