// The studio's live sessions kept in memory (services/session-cache.ts), against the real database:
// which statements tell the API processes (the triggers of src/db/sql/session_changed.sql) and which
// must not (a charge: a NOTIFY would serialise commits), and the cache's own rules: an entry served
// for its time only, dropped by a notification from any connection, and never kept from a read that
// began before a drop.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { waitFor } from '../../helpers/wait.ts';
import { SESSIONS_CHANNEL } from '../../../src/db/channels.ts';
import { Sessions } from '../../../src/services/sessions.ts';
import { SessionCache } from '../../../src/services/session-cache.ts';
import { liveSession } from '../../../src/db/studio-sessions.ts';
import crypto from 'node:crypto';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let listener: pg.Client;
/** Notifications heard on SESSIONS_CHANNEL, with a sentinel's payload marking where a step ends. */
const heard: string[] = [];

beforeAll(async () => {
  dbh = await freshDatabase();
  listener = new pg.Client({ connectionString: dbh.url });
  await listener.connect();
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  await listener.query(`LISTEN ${SESSIONS_CHANNEL}`);
  for (const id of ['acct_a', 'acct_b'])
    await dbh.db.query('INSERT INTO accounts (id, email, balance_cents) VALUES ($1, $2, 1000)', [
      id,
      `${id}@example.test`,
    ]);
});

afterAll(async () => {
  await listener?.end();
  await dbh?.drop();
});

/** Whether `sql` notified: a sentinel sent after it arrives after anything it sent (commit order). */
async function notifies(sql: string, params: unknown[] = []): Promise<boolean> {
  const sentinel = async () => {
    const mark = crypto.randomUUID();
    await dbh.db.query('SELECT pg_notify($1, $2)', [SESSIONS_CHANNEL, mark]);
    await waitFor('the sentinel', () => heard.includes(mark));
    return mark;
  };
  await sentinel(); // what earlier steps sent has arrived
  heard.length = 0;
  await dbh.db.query(sql, params);
  return heard.indexOf(await sentinel()) > 0;
}

describe('which changes tell the processes that keep sessions', () => {
  it('a charge, a credit, a sign-in touch or a last-account change: none', async () => {
    expect(
      await notifies('UPDATE accounts SET balance_cents = balance_cents - 5 WHERE id = $1', [
        'acct_a',
      ]),
    ).toBe(false);
    const sessions = new Sessions(dbh.db, { adminToken: 'a'.repeat(40), perAccount: 10 });
    const id = await sessions.create({ personId: 'usr_a', accountId: 'acct_a' });
    const hash = crypto.createHash('sha256').update(id).digest();
    expect(
      await notifies('UPDATE studio_sessions SET last_seen_at = now() WHERE id_hash = $1', [hash]),
    ).toBe(false);
    expect(
      await notifies('UPDATE people SET last_account_id = $2 WHERE id = $1', ['usr_a', 'acct_a']),
    ).toBe(false);
  });

  it('a sign-out, an account switch, a membership, a person, an account name or 2FA rule: each', async () => {
    const sessions = new Sessions(dbh.db, { adminToken: 'a'.repeat(40), perAccount: 10 });
    const id = await sessions.create({ personId: 'usr_a', accountId: 'acct_a' });
    const hash = crypto.createHash('sha256').update(id).digest();
    const changes: [string, unknown[]][] = [
      [
        `INSERT INTO memberships (account_id, person_id, role) VALUES ('acct_b', 'usr_a', 'viewer')`,
        [],
      ],
      [
        `UPDATE memberships SET role = 'developer' WHERE account_id = 'acct_b' AND person_id = 'usr_a'`,
        [],
      ],
      ['UPDATE studio_sessions SET account_id = $2 WHERE id_hash = $1', [hash, 'acct_b']],
      [`DELETE FROM memberships WHERE account_id = 'acct_b' AND person_id = 'usr_a'`, []],
      [`UPDATE people SET email = 'new-a@example.test' WHERE id = 'usr_a'`, []],
      [`UPDATE accounts SET name = 'Studio A' WHERE id = 'acct_a'`, []],
      [`UPDATE accounts SET two_factor_required = true WHERE id = 'acct_a'`, []],
      ['UPDATE studio_sessions SET revoked_at = now() WHERE id_hash = $1', [hash]],
    ];
    for (const [sql, params] of changes) expect(await notifies(sql, params), sql).toBe(true);
  });
});

describe('SessionCache', () => {
  const row = async (id: string) =>
    (await liveSession(dbh.db, crypto.createHash('sha256').update(id).digest(), 7200))!;

  it('serves an entry for its time, drops it on a notification from anywhere', async () => {
    const cache = new SessionCache(dbh.url, 100, () => {}, 60_000);
    await cache.start();
    try {
      const sessions = new Sessions(dbh.db, { adminToken: 'a'.repeat(40), perAccount: 10 }, cache);
      const id = await sessions.create({ personId: 'usr_b', accountId: 'acct_b' });
      await waitFor('the cache to listen', async () => {
        await sessions.find(id, 'account');
        return cache.get(crypto.createHash('sha256').update(id).digest('base64')) !== null;
      });
      // Served from memory: a role changed behind its back by a bare UPDATE shows only after the
      // notification its trigger sends, which another connection's commit brings.
      const before = await sessions.find(id, 'account');
      expect(before?.principal).toMatchObject({ role: 'owner' });
      await dbh.db.query(`UPDATE memberships SET role = 'viewer' WHERE account_id = 'acct_b'`);
      await waitFor('the change to show', async () => {
        const s = await sessions.find(id, 'account');
        return s?.principal.kind === 'member' && s.principal.role === 'viewer';
      });
      // Signed out elsewhere: refused at once, although the entry had 60 s left.
      await dbh.db.query('UPDATE studio_sessions SET revoked_at = now() WHERE id_hash = $1', [
        crypto.createHash('sha256').update(id).digest(),
      ]);
      await waitFor(
        'the sign-out to show',
        async () => (await sessions.find(id, 'account')) === null,
      );
    } finally {
      await cache.stop();
    }
  });

  it('keeps no read begun before a drop; a charge drops its account only; an entry expires', async () => {
    const cache = new SessionCache(dbh.url, 100, () => {}, 200);
    await cache.start();
    try {
      const sessions = new Sessions(dbh.db, { adminToken: 'a'.repeat(40), perAccount: 10 });
      const a = await sessions.create({ personId: 'usr_a', accountId: 'acct_a' });
      const b = await sessions.create({ personId: 'usr_b', accountId: 'acct_b' });
      const [ka, kb] = [a, b].map((x) => crypto.createHash('sha256').update(x).digest('base64'));
      await waitFor('the cache to listen', async () => {
        cache.keep(ka, await row(a), cache.begin());
        return cache.get(ka) !== null;
      });
      const epoch = cache.begin();
      const read = await row(b);
      cache.forgetAccount('acct_a'); // a charge of account A, answered by this process
      expect(cache.get(ka)).toBeNull();
      cache.keep(kb, read, epoch); // read before the drop: it may predate the charge
      expect(cache.get(kb)).toBeNull();
      cache.keep(kb, await row(b), cache.begin());
      cache.keep(ka, await row(a), cache.begin());
      cache.forgetAccount('acct_a');
      expect(cache.get(kb)).not.toBeNull(); // B's balance did not move
      expect(cache.get(ka)).toBeNull();
      // the time under test: an entry's 200 ms
      await new Promise((r) => setTimeout(r, 250));
      expect(cache.get(kb)).toBeNull();
    } finally {
      await cache.stop();
    }
  });

  it('keeps nothing while its connection is down', async () => {
    const cache = new SessionCache(dbh.url, 100, () => {}, 60_000);
    const sessions = new Sessions(dbh.db, { adminToken: 'a'.repeat(40), perAccount: 10 });
    const a = await sessions.create({ personId: 'usr_a', accountId: 'acct_a' });
    const key = crypto.createHash('sha256').update(a).digest('base64');
    cache.keep(key, await row(a), cache.begin()); // not started: not listening
    expect(cache.get(key)).toBeNull();
    await cache.start();
    await waitFor('the cache to listen', async () => {
      cache.keep(key, await row(a), cache.begin());
      return cache.get(key) !== null;
    });
    // The listening connection dropped (a database restart): everything is dropped and nothing kept.
    await dbh.db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE query = 'LISTEN "${SESSIONS_CHANNEL}"' AND datname = current_database()`,
    );
    await waitFor('the drop', () => cache.get(key) === null);
    cache.keep(key, await row(a), cache.begin());
    expect(cache.get(key)).toBeNull();
    await cache.stop();
  });
});
