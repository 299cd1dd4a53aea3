// Keys kept until a change is heard (services/key-resolver.ts, the trigger of
// src/db/sql/keys_changed.sql), against the real database: a key in steady use is answered from
// memory past the short lifetime, with no lookup; a revocation made elsewhere (another process's
// statement) is refused as soon as its notification arrives; the rate limiter's writes to a key in
// use notify nothing; without the LISTEN connection, answers live the short lifetime only.
import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Accounts } from '../../../src/services/accounts.ts';
import { ApiKeys } from '../../../src/services/keys.ts';
import { KeyResolver } from '../../../src/services/key-resolver.ts';
import { KEYS_CHANNEL } from '../../../src/db/channels.ts';
import { OPERATOR } from '../../../src/domain/principal.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { waitFor } from '../../helpers/wait.ts';
import { counting } from '../../helpers/counting-db.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let listener: pg.Client;
const heard: string[] = [];
/** The short lifetime, used when nothing is heard. */
const TTL = 50;

beforeAll(async () => {
  dbh = await freshDatabase();
  listener = new pg.Client({ connectionString: dbh.url });
  await listener.connect();
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  await listener.query(`LISTEN ${KEYS_CHANNEL}`);
});
afterAll(async () => {
  await listener?.end();
  await dbh?.drop();
});

async function newKey(email: string) {
  const a = await new Accounts(dbh.db).create(OPERATOR, email, null);
  return new ApiKeys(dbh.db, 'rg_', 600).create(OPERATOR, a.id, { name: 'k' });
}

/** Until `ms` have passed (a condition, not a sleep: the clock is what the cache reads). */
const past = (t0: number, ms: number) => waitFor(`${ms} ms`, () => Date.now() - t0 > ms);

/** Whether `sql` notified KEYS_CHANNEL: a sentinel sent after it arrives after anything it sent. */
async function notifies(sql: string, params: unknown[]): Promise<boolean> {
  const sentinel = async () => {
    const mark = crypto.randomUUID();
    await dbh.db.query('SELECT pg_notify($1, $2)', [KEYS_CHANNEL, mark]);
    await waitFor('the sentinel', () => heard.includes(mark));
    return mark;
  };
  await sentinel();
  heard.length = 0;
  await dbh.db.query(sql, params);
  return heard.indexOf(await sentinel()) > 0;
}

it('keeps a key in steady use without a lookup, and refuses it once revoked elsewhere', async () => {
  const made = await newKey('kept@t.test');
  const header = `Bearer ${made.key}`;
  const { db, names } = counting(dbh.db);
  const lookups = () => names.filter((n) => n === 'key-lookup').length;
  const resolver = new KeyResolver(db, 'rg_', TTL);
  await resolver.listen(dbh.url, () => {});
  try {
    const t0 = Date.now();
    await resolver.authenticate(header);
    expect(lookups()).toBe(1);
    // Well past the short lifetime (and past half of it): still from memory, nothing asked.
    await past(t0, TTL * 3);
    expect(resolver.cached(header)?.id).toBe(made.id);
    expect((await resolver.authenticate(header)).id).toBe(made.id);
    expect(lookups()).toBe(1);
    // Revoked by another process's statement: refused as soon as its notification is heard.
    const revokedAt = Date.now();
    await dbh.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [made.id]);
    await waitFor('the revoked key refused', async () => {
      if (resolver.cached(header)) return false;
      await expect(resolver.authenticate(header)).rejects.toMatchObject({
        code: 'API_KEY_REVOKED',
      });
      return true;
    });
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  } finally {
    await resolver.stop();
  }
});

it('serves for the short lifetime only while nothing is heard', async () => {
  const made = await newKey('unheard@t.test');
  const header = `Bearer ${made.key}`;
  const { db, names } = counting(dbh.db);
  const resolver = new KeyResolver(db, 'rg_', TTL);
  await resolver.listen(dbh.url, () => {});
  await resolver.stop(); // the connection gone: nothing it kept, nothing kept long
  const t0 = Date.now();
  await resolver.authenticate(header);
  await past(t0, TTL * 2);
  expect(resolver.cached(header)).toBeUndefined();
  expect(names.filter((n) => n === 'key-lookup').length).toBe(1);
});

it('tells the processes of keys made, revoked or changed, never of a key being used', async () => {
  const made = await newKey('told@t.test');
  const id = made.id;
  expect(await notifies('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [id])).toBe(
    false,
  );
  expect(await notifies('UPDATE api_keys SET rate_limit_per_minute = 60 WHERE id = $1', [id])).toBe(
    true,
  );
  expect(await notifies('UPDATE api_keys SET daily_cap_cents = 5 WHERE id = $1', [id])).toBe(true);
  expect(await notifies('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [id])).toBe(true);
  const account = (await dbh.db.query('SELECT account_id FROM api_keys WHERE id = $1', [id]))
    .rows[0].account_id as string;
  expect(
    await notifies(
      `INSERT INTO api_keys (id, account_id, name, key_hash, start, rate_limit_per_minute)
       VALUES ('key_trig01', $1, 'n', '\\x01', 'rg_x', 60)`,
      [account],
    ),
  ).toBe(true);
});
