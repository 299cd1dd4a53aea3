// History's one statement against the API's own reading of the same rows: for every row of every page
// (filters included), the fields the page shows equal the public generation's (services/generation-view.ts)
// and the queue position equals the API's per-row count (QUEUE_POSITION), cap included, with other
// accounts' renders and other models interleaved in the queue; and the page read with its session in
// one statement equals it, for a live session only. Test keys' renders are never on it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { GENERATION_COLUMNS, QUEUE_POSITION } from '../../src/db/generations.ts';
import { History, type HistoryItem } from '../../src/services/history.ts';
import { Sessions } from '../../src/services/sessions.ts';
import { generationView, type GenerationRow } from '../../src/services/generation-view.ts';
import { memberPrincipal } from '../../src/domain/principal.ts';

const URL_BASE = 'https://rg.example';
let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let history: History;
let seq = 0;
const testIds: string[] = [];
const nextId = () => `gen_${(++seq).toString(16).padStart(32, '0')}`;

async function gen(o: {
  account: string;
  model: string;
  key?: string | null;
  state?: 'waiting' | 'running' | 'succeeded' | 'failed' | 'deleted';
  inputs?: Record<string, unknown>;
  mode?: 'live' | 'test';
}) {
  const id = nextId();
  const state = o.state ?? 'waiting';
  const status =
    { waiting: 'queued', running: 'queued', deleted: 'queued' }[state as string] ?? state;
  await dbh.db.query(
    `INSERT INTO generations (id, account_id, key_id, model_id, inputs, status, cost_cents, refunded_cents,
       content_key, content_type, error_code, error_message, started_at, completed_at, progress,
       deleted_at, deadline_at, mode)
     VALUES ($1, $2, $3, $4, $5, $6, 40, $7, $8, $9, $10, $11, $12, $13, $14, $15, now() + interval '1 hour',
       $16)`,
    [
      id,
      o.account,
      o.key ?? null,
      o.model,
      JSON.stringify(o.inputs ?? { prompt: `render ${seq}` }),
      status,
      state === 'failed' ? 40 : 0,
      state === 'succeeded' ? `out/${id}.mp4` : null,
      state === 'succeeded' ? 'video/mp4' : null,
      state === 'failed' ? 'RENDER_TIMEOUT' : null,
      state === 'failed' ? 'The render took over 60 s.' : null,
      ['running', 'succeeded', 'failed'].includes(state) ? new Date(Date.now() - 9000) : null,
      ['succeeded', 'failed'].includes(state) ? new Date(Date.now() - 1500) : null,
      state === 'running' ? 0.25 : null,
      state === 'deleted' ? new Date() : null,
      o.mode ?? 'live',
    ],
  );
  return id;
}

/** The API's reading of one row: its public view, the API's queue position, and the source. */
async function oracle(id: string) {
  const { rows } = await dbh.db.query(
    `SELECT ${GENERATION_COLUMNS}, ${QUEUE_POSITION('g')},
       (SELECT k.name || ' (' || k.start || '…)' FROM api_keys k WHERE k.id = g.key_id) AS source
     FROM generations g WHERE g.id = $1`,
    [id],
  );
  const r = rows[0] as GenerationRow & { source: string | null };
  const v = generationView(r, URL_BASE);
  return { v, source: r.source ?? 'Studio' };
}

/** What the page shows of the text input: its first 300 UTF-16 units and an ellipsis. */
const shownText = (t: unknown) =>
  typeof t !== 'string' ? undefined : t.length > 300 ? t.slice(0, 300) + '…' : t;

async function expectLikeApi(items: HistoryItem[]) {
  for (const item of items) {
    const { v, source } = await oracle(item.id);
    const inputs = v.inputs as Record<string, unknown>;
    expect(item.source, item.id).toBe(source);
    expect(item.inputs.prompt, item.id).toBe(
      typeof inputs.prompt === 'string' ? inputs.prompt : undefined,
    );
    expect(shownText(item.inputs.text), item.id).toBe(shownText(inputs.text));
    for (const k of [
      'id',
      'modelId',
      'status',
      'costCents',
      'refundedCents',
      'contentUrl',
      'contentType',
      'textOutput',
      'error',
      'createdAt',
      'startedAt',
      'completedAt',
      'progress',
      'queuePosition',
    ] as const)
      expect(item[k], `${item.id} ${k}`).toEqual(v[k]);
  }
}

/** A session's principal until memberships exist: the account's owner, named by the account. */
// the account's own person (migrations/030: `usr_` and the account's id)
const owner = (account: string) => memberPrincipal(account, `usr_${account.slice(5)}`, 'owner');

async function allPages(accountId: string, f: { status?: string; modelId?: string } = {}) {
  const out: HistoryItem[] = [];
  let cursor: string | null = null;
  do {
    const page = await history.list(owner(accountId), {
      limit: 20,
      cursor,
      status: f.status ?? null,
      modelId: f.modelId ?? null,
    });
    out.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

beforeAll(async () => {
  dbh = await freshDatabase();
  history = new History(dbh.db, URL_BASE);
  for (const a of ['acct_a', 'acct_b'])
    await dbh.db.query(`INSERT INTO accounts (id, email) VALUES ($1, $2)`, [
      a,
      `${a}@example.test`,
    ]);
  await dbh.db.query(
    `INSERT INTO api_keys (id, account_id, name, key_hash, start, rate_limit_per_minute)
     VALUES ('key_a', 'acct_a', 'render bot', '\\x01', 'rg_live_abcd', 60)`,
  );
  const A = { account: 'acct_a' };
  const B = { account: 'acct_b' };
  // Model one: another account's 60 waiting, ours (10), theirs (50 more), ours past the cap (5).
  for (let i = 0; i < 60; i++) await gen({ ...B, model: 'm/one' });
  for (let i = 0; i < 10; i++) await gen({ ...A, model: 'm/one', key: i % 2 ? 'key_a' : null });
  for (let i = 0; i < 50; i++) await gen({ ...B, model: 'm/one' });
  for (let i = 0; i < 5; i++) await gen({ ...A, model: 'm/one' });
  // Model two, interleaved: waiting renders of both accounts, ours running, finished and deleted.
  for (let i = 0; i < 6; i++) {
    await gen({ ...B, model: 'm/two' });
    await gen({ ...A, model: 'm/two', key: 'key_a' });
  }
  await gen({ ...A, model: 'm/two', state: 'running' });
  await gen({ ...A, model: 'm/one', state: 'succeeded' });
  await gen({
    ...A,
    model: 'm/two',
    state: 'failed',
    inputs: { prompt: 5, text: 'ab'.repeat(200) },
  });
  await gen({ ...A, model: 'm/two', state: 'deleted' });
  // A text whose 300th UTF-16 unit is inside an astral character (each emoji is two units).
  await gen({ ...A, model: 'm/one', inputs: { text: 'a' + '🎬'.repeat(200) } });
  await gen({ ...A, model: 'm/one', inputs: { text: 'short' } });
  for (let i = 0; i < 3; i++) await gen({ ...B, model: 'm/two' });
  // Renders of a test key: never on the studio's pages (the studio acts live).
  for (const state of ['succeeded', 'failed', 'waiting'] as const)
    testIds.push(await gen({ ...A, model: 'm/one', key: 'key_a', state, mode: 'test' }));
});
afterAll(async () => {
  await dbh?.drop();
});

describe('History reads what the API reads', () => {
  it('every page of an account: the same fields, sources and queue positions', async () => {
    const items = await allPages('acct_a');
    expect(items).toHaveLength(10 + 5 + 6 + 1 + 1 + 1 + 2); // the deleted one is not listed
    expect(items.map((i) => i.id)).toEqual([...items.map((i) => i.id)].sort().reverse());
    const positions = items.map((i) => i.queuePosition).filter((p) => p !== null);
    expect(positions).toContain(100); // past the cap
    expect(positions).toContain(61); // our first of model one: 60 of another account ahead
    await expectLikeApi(items);
    expect(items.filter((i) => testIds.includes(i.id))).toEqual([]); // no test render
  });

  it('filtered by status and model, the same again', async () => {
    for (const f of [
      { status: 'queued' },
      { status: 'running' },
      { status: 'succeeded' },
      { status: 'failed' },
      { modelId: 'm/two' },
      { modelId: 'm/one', status: 'queued' },
    ]) {
      const items = await allPages('acct_a', f);
      expect(items.length, JSON.stringify(f)).toBeGreaterThan(0);
      await expectLikeApi(items);
    }
  });

  it("estimates a model's render time by the account's latest succeeded renders", async () => {
    // Each succeeded row here started 9 s and finished 1.5 s before it was written: 7.5 s.
    expect(await history.typicalSeconds(owner('acct_a'), 'm/one')).toBeCloseTo(7.5, 1);
    // None succeeded of this model, nor any render of the other account's: no estimate.
    expect(await history.typicalSeconds(owner('acct_a'), 'm/none')).toBeNull();
    expect(await history.typicalSeconds(owner('acct_b'), 'm/one')).toBeNull();
  });

  it("the other account's positions too, with ours interleaved", async () => {
    await expectLikeApi(await allPages('acct_b'));
  });
});

describe('History read on a session in another time zone', () => {
  it('the same instants (the JSON text carries the offset; never read as local time)', async () => {
    const client = await dbh.db.connect();
    try {
      await client.query(`SET TimeZone = 'America/St_Johns'`); // UTC−3:30, a half-hour offset
      const other = new History(client as unknown as typeof dbh.db, URL_BASE);
      const q = { limit: 50, cursor: null, status: null, modelId: null };
      const a = owner('acct_a');
      const [there, here] = [await other.list(a, q), await history.list(a, q)];
      expect(there.data.length).toBeGreaterThan(0);
      expect(there.data).toEqual(here.data);
      await expectLikeApi(there.data);
    } finally {
      await client.query('RESET TimeZone');
      client.release();
    }
  });
});

describe('History read with its session, in one statement', () => {
  it('the page list() reads, for a live session only (not unknown, console or signed out)', async () => {
    const sessions = new Sessions(dbh.db, { adminToken: 'a'.repeat(40), perAccount: 10 });
    const read = (cookie: string, q: Parameters<History['list']>[1]) =>
      sessions.findWith(
        cookie,
        'account',
        (h, idle) => history.listOfSession(h, idle, q),
        (s) => history.list(s.principal, q),
      );
    const id = await sessions.create({ personId: 'usr_a', accountId: 'acct_a' });
    const first = { limit: 20, cursor: null, status: null, modelId: null };
    const queries = [
      first,
      { ...first, cursor: (await history.list(owner('acct_a'), first)).nextCursor },
      { ...first, status: 'queued' },
      { ...first, modelId: 'm/two' },
    ];
    for (const q of queries) {
      const r = await read(id, q);
      expect(r.session?.accountId, JSON.stringify(q)).toBe('acct_a');
      expect(r.session?.principal).toEqual(owner('acct_a'));
      expect(r.session?.email).toBe('acct_a@example.test');
      expect(r.value, JSON.stringify(q)).toEqual(await history.list(owner('acct_a'), q));
    }
    expect((await read(id, first)).value!.data.length).toBe(20);
    const none = { session: null, value: null };
    expect(await read('no such session', first)).toEqual(none);
    expect(await read(await sessions.create(null), first)).toEqual(none); // the console's
    await sessions.revoke(id);
    expect(await read(id, first)).toEqual(none);
  });
});
