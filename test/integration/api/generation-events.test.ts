// A render's live events (docs/api.md "Live events of a render"): the state at once, one event per
// change of status, start or progress, woken by the change notification, the end after the final
// status, Last-Event-ID resumes, comment lines, 404 as GET, the bound per account (429), and
// every place given back when clients go away.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { waitFor } from '../../helpers/wait.ts';
import { openEvents } from '../../helpers/event-stream.ts';
import { StudioSession } from '../../studio/http-session.ts';

// No worker: the tests change renders themselves, through the database, as a worker elsewhere
// would. 2,000 streams a process: 200 an account.
const f = serviceFixture({
  role: 'api',
  env: { RENDERGATE_MAX_WAITERS: '2000', RENDERGATE_EVENT_KEEPALIVE_MS: '150' },
});

const create = async (key: string) => {
  const r = await f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId: 'rendergate/shot-list', inputs: { text: 'The tide turns. A gull lands.' } },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.status).toBe(202);
  return r.json.id as string;
};
const set = (id: string, sql: string) =>
  f.dbh.db.query(`UPDATE generations SET ${sql} WHERE id = $1`, [id]);
/** A start, as a worker announces it: after its commit (the trigger does not fire on it). */
const start = async (id: string) => {
  await set(id, 'started_at = now()');
  await f.dbh.db.query(`SELECT pg_notify('rendergate_generation_changed', $1)`, [id]);
};
const finish = (id: string) =>
  set(
    id,
    `status = 'succeeded', text_output = 'done', completed_at = now(),
     started_at = coalesce(started_at, now()), progress = 1`,
  );
const get = async (key: string, id: string) =>
  (await f.api.call('GET', `/v1/generations/${id}`, { key })).json;
const streams = async () =>
  Number(
    /^rendergate_event_streams (\d+)$/m.exec(
      await (await fetch(`${f.svc.base}/metrics`)).text(),
    )![1],
  );
const streamsAre = (n: number) => waitFor(`${n} open streams`, async () => (await streams()) === n);

it('sends the state at once, each change as GET shows it, and ends after the final status', async () => {
  const a = await f.api.account(10_000);
  const id = await create(a.key);
  const s = await openEvents(f.svc.base, a.key, id);
  expect(s.status).toBe(200);
  expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
  expect(s.headers['x-request-id']).toBeTruthy();
  expect(s.headers.ratelimit).toBeTruthy();
  const first = await s.nth(1);
  expect(first.event).toBe('generation');
  expect(JSON.parse(first.data)).toEqual(await get(a.key, id));
  await start(id);
  const started = JSON.parse((await s.nth(2)).data);
  expect([started.status, started.startedAt !== null, started.progress]).toEqual([
    'queued',
    true,
    null,
  ]);
  await set(id, 'progress = 0.25');
  expect(JSON.parse((await s.nth(3)).data).progress).toBe(0.25);
  await set(id, 'progress = 0.5');
  const half = await s.nth(4);
  expect(JSON.parse(half.data)).toEqual(await get(a.key, id));
  await finish(id);
  const last = await s.nth(5);
  expect(JSON.parse(last.data)).toMatchObject({ status: 'succeeded', textOutput: 'done' });
  await waitFor('the stream to end', () => s.ended);
  expect(s.events).toHaveLength(5);
  const ids = s.events.map((e) => Number(e.id));
  expect(ids).toEqual([...ids].sort((x, y) => x - y));
  expect(new Set(ids).size).toBe(5);
  await streamsAre(0);
});

it('resumes after Last-Event-ID: nothing again when nothing was missed, else the state first', async () => {
  const a = await f.api.account(10_000);
  const id = await create(a.key);
  const s = await openEvents(f.svc.base, a.key, id);
  const first = await s.nth(1);
  s.close();
  // nothing changed: the resumed stream says nothing until the render changes (a comment first)
  const same = await openEvents(f.svc.base, a.key, id, { 'last-event-id': first.id });
  await waitFor('a comment line', () => same.comments >= 2);
  expect(same.events).toHaveLength(0);
  await set(id, 'started_at = now(), progress = 0.1');
  const next = await same.nth(1);
  expect(Number(next.id)).toBeGreaterThan(Number(first.id));
  expect(JSON.parse(next.data).progress).toBe(0.1);
  same.close();
  // missed a change: the current state at once, with a later id
  const missed = await openEvents(f.svc.base, a.key, id, { 'last-event-id': first.id });
  const now = await missed.nth(1);
  expect(JSON.parse(now.data)).toEqual(await get(a.key, id));
  expect(Number(now.id)).toBeGreaterThan(Number(first.id));
  await finish(id);
  const final = await missed.nth(2);
  await waitFor('the stream to end', () => missed.ended);
  // the client holds the final state: the stream ends at once, empty
  const after = await openEvents(f.svc.base, a.key, id, { 'last-event-id': final.id });
  await waitFor('the stream to end', () => after.ended);
  expect(after.events).toHaveLength(0);
  // an id that is not ours is ignored: the state at once, then the end
  const odd = await openEvents(f.svc.base, a.key, id, { 'last-event-id': 'x' });
  expect(JSON.parse((await odd.nth(1)).data).status).toBe('succeeded');
  await waitFor('the stream to end', () => odd.ended);
  await streamsAre(0);
});

it('answers 404 as GET does: another account, a test key for a live render, an unknown id', async () => {
  const a = await f.api.account(10_000);
  const b = await f.api.account(10_000);
  const t = await f.api.admin('POST', `/accounts/${a.accountId}/keys`, { mode: 'test' });
  const id = await create(a.key);
  for (const [key, gid] of [
    [b.key, id],
    [t.key as string, id],
    [a.key, 'gen_nope'],
  ]) {
    const s = await openEvents(f.svc.base, key, gid);
    expect([s.status, s.json.code]).toEqual([404, 'GENERATION_NOT_FOUND']);
  }
  const none = await openEvents(f.svc.base, 'rg_live_nope', id);
  expect(none.status).toBe(401);
});

it('ends the stream when the render is deleted', async () => {
  const a = await f.api.account(10_000);
  const id = await create(a.key);
  const s = await openEvents(f.svc.base, a.key, id);
  await s.nth(1);
  expect((await f.api.call('DELETE', `/v1/generations/${id}`, { key: a.key })).status).toBe(200);
  // the refund of the cancel is an event, then the stream ends with the record gone
  await waitFor('the stream to end', () => s.ended);
  await streamsAre(0);
});

it('holds at most a tenth of the streams per account (429), and gives every place back', async () => {
  const a = await f.api.account(10_000);
  const b = await f.api.account(10_000);
  const id = await create(a.key);
  const other = await create(b.key);
  const open = await Promise.all(
    Array.from({ length: 200 }, () => openEvents(f.svc.base, a.key, id)),
  );
  expect(open.map((s) => s.status)).toEqual(Array(200).fill(200));
  await streamsAre(200);
  const refused = await openEvents(f.svc.base, a.key, id);
  expect([refused.status, refused.json.code]).toEqual([429, 'RATE_LIMITED']);
  expect(refused.headers['retry-after']).toBeTruthy();
  // another account is not held back by this one's streams
  const theirs = await openEvents(f.svc.base, b.key, other);
  expect(theirs.status).toBe(200);
  await theirs.nth(1);
  for (const s of open) s.close();
  theirs.close();
  await streamsAre(0);
  // the places are back: the account may open streams again
  const again = await openEvents(f.svc.base, a.key, id);
  expect(again.status).toBe(200);
  await again.nth(1);
  again.close();
  await streamsAre(0);
});

it("the studio's pages follow the same stream with the session, for the account's renders only", async () => {
  const s = new StudioSession(f.svc.base);
  const email = await s.signUp();
  const { rows } = await f.dbh.db.query('SELECT id FROM accounts WHERE email = $1', [email]);
  await f.api.admin('POST', `/accounts/${rows[0].id}/credits`, { amountCents: 1_000 });
  const key = (await f.api.admin('POST', `/accounts/${rows[0].id}/keys`, {})).key as string;
  const id = await create(key);
  const history = await s.get('/history');
  expect(history.text).toContain(`data-events="/history/${id}/events"`);
  const cookie = { cookie: s.cookieHeader() };
  const live = await openEvents(f.svc.base, '', id, cookie, `/history/${id}/events`);
  expect(live.status).toBe(200);
  expect(JSON.parse((await live.nth(1)).data)).toEqual(await get(key, id));
  await finish(id);
  expect(JSON.parse((await live.nth(2)).data).status).toBe('succeeded');
  await waitFor('the stream to end', () => live.ended);
  const other = await f.api.account(1_000);
  const theirs = await create(other.key);
  const refused = await openEvents(f.svc.base, '', theirs, cookie, `/history/${theirs}/events`);
  expect(refused.status).toBe(404);
  const anonymous = await openEvents(f.svc.base, '', id, {}, `/history/${id}/events`);
  expect(anonymous.status).not.toBe(200);
  await streamsAre(0);
});

it('a stream is one request in the metrics, ended or left by its client, with its duration', async () => {
  const route = 'route="/v1/generations/:id/events"';
  const served = async () => {
    const text = await (await fetch(`${f.svc.base}/metrics`)).text();
    const sum = (series: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(series) && l.includes(route))
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    // the counter has the status; the histogram has route and method only
    return {
      count: sum(
        'rendergate_http_requests_total{route="/v1/generations/:id/events",method="GET",status="200"}',
      ),
      seconds: sum('rendergate_http_request_duration_seconds_sum'),
    };
  };
  const a = await f.api.account(10_000);
  for (const end of ['finished', 'left'] as const) {
    const before = await served();
    const id = await create(a.key);
    const s = await openEvents(f.svc.base, a.key, id);
    await s.nth(1);
    // open for a while: the stream's time counts, not only its first answer
    await new Promise((r) => setTimeout(r, 300));
    if (end === 'finished') {
      await finish(id);
      await waitFor('the stream to end', () => s.ended);
    } else s.close();
    await waitFor(`the ${end} stream counted`, async () => {
      const now = await served();
      return now.count === before.count + 1 && now.seconds - before.seconds >= 0.3;
    });
  }
  await streamsAre(0);
});
