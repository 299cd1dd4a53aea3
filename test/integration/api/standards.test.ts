// HTTP standards the API follows to the letter: an Idempotency-Key sent as a Structured Field string
// is the same key as the bare token (one charge); every RFC 7240 form of `Prefer: wait` the server
// honours is one the document allows (client() checks each answer against it); a 201 names what it
// created in Location.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';

const f = serviceFixture();
const TEXT = { modelId: 'rendergate/shot-list', inputs: { text: 'A boat leaves the harbour.' } };

it('an Idempotency-Key as a Structured Field string ("k") is the same key as k: one generation, one charge', async () => {
  const { key, accountId } = await f.api.account(100);
  const k = crypto.randomUUID();
  const bare = await f.api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': k },
  });
  const quoted = await f.api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': `"${k}"` },
  });
  expect([bare.status, quoted.status]).toEqual([202, 202]);
  expect(quoted.json.id).toBe(bare.json.id);
  expect(quoted.headers.get('idempotent-replayed')).toBe('true');
  const escaped = await f.api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': '"a\\"b"' },
  });
  const plain = await f.api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': 'a"b' },
  });
  expect(plain.json.id).toBe(escaped.json.id);
  const { rows } = await f.dbh.db.query(
    "SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'",
    [accountId],
  );
  expect(rows[0].n).toBe(2);
  const empty = await f.api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': '""' },
  });
  expect([empty.status, empty.json.code]).toEqual([400, 'IDEMPOTENCY_KEY_REQUIRED']);
});

it('Prefer: every RFC 7240 form of wait is honoured, and the document allows it', async () => {
  const { key } = await f.api.account(100);
  const doc = await (await fetch(`${f.svc.base}/v1/openapi.json`)).json();
  const pattern = new RegExp(doc.components.parameters.Prefer.schema.pattern);
  for (const prefer of [
    'wait=30',
    'wait = 30',
    'wait="30"',
    'respond-async, wait=30',
    'wait=30; foo=bar',
    'handling=lenient,wait=30',
  ]) {
    expect(pattern.test(prefer), prefer).toBe(true);
    const r = await f.api.call('POST', '/v1/generations', {
      key,
      body: TEXT,
      headers: { 'idempotency-key': crypto.randomUUID(), prefer },
    });
    expect([r.status, r.json.status, r.headers.get('preference-applied')], prefer).toEqual([
      202,
      'succeeded',
      'wait=30',
    ]);
  }
});

it("a 201 from POST /v1/webhook-endpoints has Location, the endpoint's address", async () => {
  const { key } = await f.api.account(0);
  const r = await f.api.call('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'https://hooks.example.com/rg' },
  });
  expect(r.status).toBe(201);
  expect(r.headers.get('location')).toBe(`${f.svc.base}/v1/webhook-endpoints/${r.json.id}`);
  expect(
    (await f.api.call('GET', new URL(r.headers.get('location')!).pathname, { key })).json.id,
  ).toBe(r.json.id);
});
