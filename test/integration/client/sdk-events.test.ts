// The SDK's run() and wait() follow a render with its live events (packages/client/src/events.ts):
// progress from the stream, a broken stream opened again with Last-Event-ID, and polling when the
// server has no events or the stream keeps failing.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { Rendergate, type Generation } from '../../../packages/client/src/index.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkedFetch } from '../../helpers/openapi-check.ts';
import { waitFor } from '../../helpers/wait.ts';

const TEXT = 'rendergate/shot-list';
const INPUTS = { text: 'The tide turns. A gull lands.' };
const f = serviceFixture({ role: 'api' }); // no worker: the test moves the render itself

/** A fetch that records each URL and its Last-Event-ID, and lets a test change the answers. */
function recording(rewrite?: (url: string, n: number) => Response | undefined) {
  const calls: Array<{ url: string; lastEventId: string | null }> = [];
  const inner = checkedFetch(f.svc.base);
  const fetcher: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : input.toString();
    calls.push({ url, lastEventId: new Headers(init?.headers).get('last-event-id') });
    const n = calls.filter((c) => c.url.endsWith('/events')).length;
    return (url.endsWith('/events') && rewrite?.(url, n)) || inner(input, init);
  };
  return { calls, fetcher };
}

const set = (id: string, sql: string) =>
  f.dbh.db.query(`UPDATE generations SET ${sql} WHERE id = $1`, [id]);

async function queued(key: string) {
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: TEXT, inputs: INPUTS },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  return r.json.id as string;
}

it('wait() reports each state from the event stream and resolves with the final one', async () => {
  const a = await f.api.account(10_000);
  const { calls, fetcher } = recording();
  const rg = new Rendergate({ apiKey: a.key, baseUrl: f.svc.base, fetch: fetcher });
  const id = await queued(a.key);
  const seen: Generation[] = [];
  const done = rg.generations.wait(id, { onProgress: (g) => seen.push(g) });
  await waitFor('the first event', () => seen.length === 1);
  await set(id, 'started_at = now(), progress = 0.4');
  await waitFor('the progress event', () => seen.length === 2);
  await set(id, `status = 'succeeded', text_output = 'ok', completed_at = now(), progress = 1`);
  const g = await done;
  expect(g).toMatchObject({ id, status: 'succeeded', textOutput: 'ok' });
  expect(seen.map((s) => [s.status, s.progress])).toEqual([
    ['queued', null],
    ['queued', 0.4],
    ['succeeded', 1],
  ]);
  // one stream, no poll
  expect(calls.map((c) => new URL(c.url).pathname)).toEqual([`/v1/generations/${id}/events`]);
});

it('opens a broken stream again with Last-Event-ID, and polls when the server has none', async () => {
  const a = await f.api.account(10_000);
  // the first stream ends after its first event, as a restarting server's would
  const cut = recording((url, n) => {
    if (n !== 1) return undefined;
    return new Response(
      new ReadableStream({
        async start(c) {
          const r = await fetch(url, { headers: { authorization: `Bearer ${a.key}` } });
          const reader = r.body!.getReader();
          const first = await reader.read();
          c.enqueue(first.value);
          await reader.cancel();
          c.close();
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    );
  });
  const rg = new Rendergate({ apiKey: a.key, baseUrl: f.svc.base, fetch: cut.fetcher });
  const id = await queued(a.key);
  const done = rg.generations.wait(id);
  await waitFor('the second stream', () => cut.calls.length === 2);
  expect(cut.calls[1].lastEventId).toMatch(/^\d+$/);
  await set(
    id,
    `status = 'succeeded', text_output = 'ok', completed_at = now(), started_at = now()`,
  );
  expect((await done).status).toBe('succeeded');
  // an older server: 404 NOT_FOUND for the route; run() polls, and never asks again
  const old = recording(
    () =>
      new Response(JSON.stringify({ code: 'NOT_FOUND', message: 'No route.', requestId: 'r' }), {
        status: 404,
        headers: { 'content-type': 'application/json' },
      }),
  );
  const rg2 = new Rendergate({ apiKey: a.key, baseUrl: f.svc.base, fetch: old.fetcher });
  const id2 = await queued(a.key);
  const polled = rg2.generations.wait(id2);
  await waitFor('a poll', () => old.calls.some((c) => c.url.endsWith(id2)));
  await set(
    id2,
    `status = 'succeeded', text_output = 'ok', completed_at = now(), started_at = now()`,
  );
  expect((await polled).status).toBe('succeeded');
  const id3 = await queued(a.key);
  await set(
    id3,
    `status = 'succeeded', text_output = 'ok', completed_at = now(), started_at = now()`,
  );
  await rg2.generations.wait(id3);
  expect(old.calls.filter((c) => c.url.endsWith('/events'))).toHaveLength(1);
});
