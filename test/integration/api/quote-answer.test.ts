// POST /v1/quote's answer, byte for byte: the route serialises it itself (src/http/routes/quote.post.ts),
// so its type, members, order and errors are checked here against what the contract gives.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url);
  api = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

it('is the resolved inputs and the price as JSON, with the type every JSON answer has', async () => {
  const a = await api.account(500);
  const body = {
    modelId: 'rendergate/image-to-video',
    inputs: { prompt: 'p', image: 'https://example.com/a.png' },
  };
  const q = await api.call('POST', '/v1/quote', { key: a.key, body });
  expect(q.status).toBe(200);
  expect(q.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(q.headers.get('x-request-id')).toMatch(/^req_/);
  expect(q.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
  // Members in the contract's order, defaults applied in field order.
  expect(Object.keys(q.json)).toEqual(['modelId', 'inputs', 'costCents', 'currency']);
  expect(q.json).toMatchObject({ modelId: body.modelId, currency: 'EUR' });
  expect(q.json.inputs).toMatchObject(body.inputs);
  expect(Number.isSafeInteger(q.json.costCents)).toBe(true);
  expect(q.text).toBe(JSON.stringify(q.json));
  expect(Number(q.headers.get('content-length'))).toBe(Buffer.byteLength(q.text));
  // The same resolved inputs cost the same on a create.
  const g = await api.call('POST', '/v1/generations', {
    key: a.key,
    body,
    headers: { 'idempotency-key': 'quote-answer-1' },
  });
  expect(g.status).toBe(202);
  expect(g.json.costCents).toBe(q.json.costCents);
  expect(g.json.inputs).toEqual(q.json.inputs);
});

it('keeps its errors: unknown model, bad inputs, a body that is no object', async () => {
  const a = await api.account(0);
  const unknown = await api.call('POST', '/v1/quote', {
    key: a.key,
    body: { modelId: 'nope/nope', inputs: {} },
  });
  expect(unknown.status).toBe(400);
  expect(unknown.json.code).toBe('INVALID_INPUT');
  expect(unknown.json.details.map((d: { field: string }) => d.field)).toContain('modelId');
  const bad = await api.call('POST', '/v1/quote', {
    key: a.key,
    body: { modelId: 'rendergate/image-to-video', inputs: { prompt: 'p', image: 'ftp://x/a.png' } },
  });
  expect(bad.status).toBe(400);
  expect(bad.json.details).toEqual([
    { field: 'inputs.image', message: 'must be an absolute http or https URL' },
  ]);
  const arr = await api.call('POST', '/v1/quote', { key: a.key, body: '[1]' });
  expect(arr.status).toBe(400);
  expect(arr.json.code).toBe('INVALID_REQUEST');
  expect((await api.call('POST', '/v1/quote', { body })).status).toBe(401);
});

const body = {
  modelId: 'rendergate/image-to-video',
  inputs: { prompt: 'p', image: 'https://example.com/a.png' },
};
