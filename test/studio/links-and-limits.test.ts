// What an account's owner (or whoever holds its cookie or a link) can do is bounded too
// (docs/account-limits.md): studio requests share the per-minute limiter of the account; a key's rate
// limit chosen in the studio has a ceiling; live keys and sessions per account are bounded; links void
// each other and a password change voids them all. And the smaller items: the ledger CSV keeps numbers
// as numbers; a 401 says how to authenticate (WWW-Authenticate).
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { ADMIN } from '../helpers/service.ts';
import { awayFromMinuteEdge } from '../helpers/minute.ts';
import { accountIdOf, PASSWORD, uniqueEmail } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';
import { StudioSession } from './http-session.ts';
import { issueToken } from '../../src/services/one-time-links.ts';
import { inviteLink } from '../../src/services/invites.ts';
import { pruneEndedSessions } from '../../src/db/studio-sessions.ts';
import { pruneEndedTokens } from '../../src/db/studio-tokens.ts';
import { pruneAttempts } from '../../src/db/studio-attempts.ts';

const PER_MINUTE = 30;
const f = serviceFixture({
  env: {
    RENDERGATE_WORKER_CONCURRENCY: '0',
    RENDERGATE_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
    RENDERGATE_KEYS_PER_ACCOUNT: '3',
    RENDERGATE_SESSIONS_PER_ACCOUNT: '3',
  },
});

const signedUp = async () => {
  const s = new StudioSession(f.svc.base);
  const email = await s.signUp();
  return { s, email, accountId: await accountIdOf(f.dbh.db, email) };
};
const signedIn = async (email: string, password = PASSWORD) => {
  const s = new StudioSession(f.svc.base);
  await s.get('/signin');
  expect((await s.post('/signin', { email, password })).status).toBe(303);
  return s;
};

/**
 * Counts the statements the service sends on its pool for the HTTP requests it receives from now on.
 * Only a request's own: a statement of the service's background work (a cache refreshed, a sweep)
 * is not one, so the count is marked on the request's async context, not on the clock.
 */
function countRequestQueries(): () => number {
  const pool = f.svc.running.infra.db as unknown as { query: (...a: unknown[]) => unknown };
  const server = f.svc.running.server.server;
  const inRequest = new AsyncLocalStorage<true>();
  const mark = () => inRequest.enterWith(true);
  server.prependListener('request', mark);
  const query = pool.query;
  let n = 0;
  pool.query = function (this: unknown, ...args: unknown[]) {
    if (inRequest.getStore()) n++;
    return query.apply(this, args);
  };
  return () => {
    pool.query = query;
    server.off('request', mark);
    return n;
  };
}

describe('studio requests', () => {
  it("count against the account's per-minute limit, with a page that says so", async () => {
    await awayFromMinuteEdge(30_000);
    const { s, email } = await signedUp(); // its first page (/) counted one request
    const other = await signedIn((await signedUp()).email); // another account is not affected
    const statuses: number[] = [];
    for (let i = 0; i < PER_MINUTE + 5; i++) statuses.push((await s.get('/history')).status);
    expect(statuses.slice(0, PER_MINUTE - 1)).toEqual(Array(PER_MINUTE - 1).fill(200));
    expect(statuses.slice(PER_MINUTE - 1)).toEqual(Array(6).fill(429));
    const page = await s.get('/keys');
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(page.text).toContain(`more than ${PER_MINUTE} requests in a minute`);
    // Once refused, the session is refused again without a statement: a flood costs no database work.
    const refused = countRequestQueries();
    for (let i = 0; i < 5; i++)
      expect([(await s.get('/history')).status, (await s.get('/keys')).status]).toEqual([429, 429]);
    expect(refused()).toBe(0);
    // The count sees a request's statements: the other account's page, served, sends some.
    const served = countRequestQueries();
    expect((await other.get('/history')).status).toBe(200);
    expect(served()).toBeGreaterThan(0);
    // A second session of the same account shares the count; another account does not.
    expect((await (await signedIn(email)).get('/history')).status).toBe(429);
    expect((await other.get('/history')).status).toBe(200);
  });
});

describe('keys made by their owner', () => {
  it('refuse a rate limit over the ceiling (the admin API may set any)', async () => {
    const { s, accountId } = await signedUp();
    await s.get('/keys');
    const over = await s.post('/keys', { name: 'greedy', rateLimit: '1000000' });
    expect(over.status).toBe(400);
    expect(over.text).toContain('from 1 to 6000');
    expect((await s.post('/keys', { name: 'fast', rateLimit: '6000' })).status).toBe(201);
    const admin = await f.api.call('POST', `/admin/v1/accounts/${accountId}/keys`, {
      key: ADMIN,
      body: { rateLimitPerMinute: 1_000_000 },
    });
    expect([admin.status, admin.json.rateLimitPerMinute]).toEqual([201, 1_000_000]);
    // any rate the column holds; one past it is refused, not a 500
    const most = await f.api.call('POST', `/admin/v1/accounts/${accountId}/keys`, {
      key: ADMIN,
      body: { rateLimitPerMinute: 2_147_483_647 },
    });
    expect([most.status, most.json.rateLimitPerMinute]).toEqual([201, 2_147_483_647]);
    const past = await f.api.call('POST', `/admin/v1/accounts/${accountId}/keys`, {
      key: ADMIN,
      body: { rateLimitPerMinute: 2_147_483_648 },
    });
    expect([past.status, past.json.code]).toEqual([400, 'INVALID_INPUT']);
  });

  it('are at most RENDERGATE_KEYS_PER_ACCOUNT live ones, however many are asked for at once', async () => {
    const { s, accountId } = await signedUp();
    await s.get('/keys');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => s.post('/keys', { name: `k${i}` })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 400)[0].text).toContain('at most 3 live keys');
    const { rows } = await f.dbh.db.query(
      'SELECT id FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL',
      [accountId],
    );
    expect(rows).toHaveLength(3);
    // Revoking one makes room.
    expect((await s.post(`/keys/${rows[0].id}/revoke`, {})).status).toBe(303);
    expect((await s.post('/keys', { name: 'again' })).status).toBe(201);
  });
});

describe('sessions', () => {
  it('are at most RENDERGATE_SESSIONS_PER_ACCOUNT per account: a new one ends the oldest', async () => {
    const { s: first, email } = await signedUp();
    const more = [];
    for (let i = 0; i < 4; i++) more.push(await signedIn(email));
    expect((await first.get('/history')).status).toBe(303);
    expect((await more[0].get('/history')).status).toBe(303);
    for (const s of more.slice(1)) expect((await s.get('/history')).status).toBe(200);
  });
});

describe('ended sessions, links and attempt counts', () => {
  it("are removed by the janitor's sweep a day after they ended; live ones stay", async () => {
    const { s, accountId } = await signedUp();
    const live = await issueToken(f.dbh.db, accountId, 'reset');
    const gone = crypto.randomBytes(32);
    await f.dbh.db.query(
      `INSERT INTO studio_sessions (id_hash, account_id, created_at, last_seen_at, expires_at)
      VALUES ($1, $2, now() - interval '9 days', now() - interval '8 days', now() - interval '2 days')`,
      [gone, accountId],
    );
    await f.dbh.db.query(
      `INSERT INTO studio_tokens (token_hash, account_id, purpose, created_at, expires_at)
      VALUES ($1, $2, 'reset', now() - interval '3 days', now() - interval '2 days')`,
      [gone, accountId],
    );
    await f.dbh.db.query(
      `INSERT INTO studio_attempts (scope, window_start, attempts) VALUES ('signin-ip:192.0.2.1', $1, 5)`,
      [Math.floor(Date.now() / 1000) - 3 * 3600],
    );
    // What the janitor's sweep does (src/queue/janitor.ts).
    await pruneEndedSessions(f.dbh.db);
    await pruneEndedTokens(f.dbh.db);
    await pruneAttempts(f.dbh.db, 3600);
    expect(
      (await f.dbh.db.query('SELECT 1 FROM studio_sessions WHERE id_hash = $1', [gone])).rows,
    ).toHaveLength(0);
    expect(
      (await f.dbh.db.query('SELECT 1 FROM studio_tokens WHERE token_hash = $1', [gone])).rows,
    ).toHaveLength(0);
    expect(
      (await f.dbh.db.query(`SELECT 1 FROM studio_attempts WHERE scope = 'signin-ip:192.0.2.1'`))
        .rows,
    ).toHaveLength(0);
    expect((await s.get('/history')).status).toBe(200);
    expect((await s.get(`/reset/${live}`)).status).toBe(200);
  });
});

describe('links', () => {
  const hash = (t: string) => crypto.createHash('sha256').update(t).digest();

  it('a new reset link voids the earlier one; using one voids every other link and ends other sessions', async () => {
    const { s, accountId, email } = await signedUp();
    const r1 = await issueToken(f.dbh.db, accountId, 'reset');
    const r2 = await issueToken(f.dbh.db, accountId, 'reset');
    const visitor = new StudioSession(f.svc.base);
    expect((await visitor.get(`/reset/${r1}`)).status).toBe(410);
    expect((await visitor.get(`/reset/${r2}`)).status).toBe(200);
    // A link issued beside it (as by a node of the previous release, which voided nothing).
    const beside = crypto.randomBytes(32).toString('base64url');
    await f.dbh.db.query(
      `INSERT INTO studio_tokens (token_hash, account_id, purpose, expires_at)
      VALUES ($1, $2, 'invite', now() + interval '1 day')`,
      [hash(beside), accountId],
    );
    expect((await visitor.get(`/invite/${beside}`)).status).toBe(200);
    expect((await visitor.post(`/reset/${r2}`, { password: 'the newest password' })).status).toBe(
      303,
    );
    expect((await visitor.get(`/invite/${beside}`)).status).toBe(410);
    expect((await s.get('/history')).status).toBe(303);
    expect((await visitor.get('/history')).status).toBe(200);
    await signedIn(email, 'the newest password');
  });

  it('a password change voids every unused link; an invitation never replaces a password set since', async () => {
    const email = uniqueEmail();
    const invite = await inviteLink(f.dbh.db, f.svc.base, email);
    const invitePath = new URL(invite.link).pathname;
    const s = new StudioSession(f.svc.base);
    expect((await s.get(invitePath)).status).toBe(200);
    expect((await s.post(invitePath, { password: 'first password set' })).status).toBe(303);
    const accountId = await accountIdOf(f.dbh.db, email);
    const reset = await issueToken(f.dbh.db, accountId, 'reset');
    await s.get('/account');
    expect(
      (
        await s.post('/account/password', {
          current: 'first password set',
          password: 'changed password',
        })
      ).status,
    ).toBe(200);
    expect((await s.get(`/reset/${reset}`)).status).toBe(410);
    // An invitation issued earlier, still unused when the owner set a password (as a node of the previous
    // release left it): it cannot replace that password.
    const old = crypto.randomBytes(32).toString('base64url');
    await f.dbh.db.query(
      `INSERT INTO studio_tokens (token_hash, account_id, purpose, created_at, expires_at)
      VALUES ($1, $2, 'invite', now() - interval '1 hour', now() + interval '6 days')`,
      [hash(old), accountId],
    );
    const stranger = new StudioSession(f.svc.base);
    await stranger.get('/signin');
    expect((await stranger.get(`/invite/${old}`)).status).toBe(410);
    expect(
      (await stranger.post(`/invite/${old}`, { password: 'taken over password' })).status,
    ).toBe(410);
    await signedIn(email, 'changed password');
  });
});

describe('smaller', () => {
  it("an invitation's account name is at most 200 characters, as in the admin API", async () => {
    await expect(
      inviteLink(f.dbh.db, f.svc.base, uniqueEmail(), 'n'.repeat(201)),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await inviteLink(f.dbh.db, f.svc.base, uniqueEmail(), 'n'.repeat(200))).link).toContain(
      '/invite/',
    );
  });

  it('the ledger CSV writes amounts as numbers and guards only text', async () => {
    const { s, accountId } = await signedUp();
    await f.api.admin('POST', `/accounts/${accountId}/credits`, {
      amountCents: 500,
      reason: '=HYPERLINK("http://x")',
    });
    const key = (await f.api.admin('POST', `/accounts/${accountId}/keys`, {})).key as string;
    const made = await f.api.call('POST', '/v1/generations', {
      key,
      headers: { 'idempotency-key': crypto.randomUUID() },
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'A gull lands. The tide turns.' } },
    });
    expect(made.status).toBe(202);
    const csv = (await s.get('/usage/ledger.csv')).text
      .trim()
      .split('\r\n')
      .map((l) => l.split(','));
    const charge = csv.find((c) => c[2] === '"charge"')!;
    const credit = csv.find((c) => c[2] === '"credit"')!;
    const cost = made.json.costCents as number;
    expect(charge.slice(3, 5)).toEqual([String(-cost), (-cost / 100).toFixed(2)]);
    expect(credit.slice(3, 5)).toEqual(['500', '5.00']);
    expect(credit.slice(6).join(',')).toBe(`"'=HYPERLINK(""http://x"")"`);
  });

  it('a 401 carries WWW-Authenticate (RFC 6750) on /v1 and the admin API', async () => {
    const challenge = async (p: string, authorization?: string) =>
      (
        await fetch(f.svc.base + p, { headers: authorization ? { authorization } : {} })
      ).headers.get('www-authenticate');
    expect(await challenge('/v1/me')).toBe('Bearer realm="rendergate"');
    expect(await challenge('/v1/me', 'Bearer rg_live_nope')).toMatch(
      /^Bearer realm="rendergate", error="invalid_token"/,
    );
    expect(await challenge('/admin/v1/accounts/acct_x')).toBe('Bearer realm="rendergate-admin"');
    expect(await challenge('/admin/v1/accounts/acct_x', 'Bearer wrong')).toMatch(
      /^Bearer realm="rendergate-admin", error="invalid_token"/,
    );
    const { key } = await f.api.account(0);
    await f.dbh.db.query('UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [
      crypto.createHash('sha256').update(key).digest(),
    ]);
    // Revocation reaches the key cache within a second.
    const revoked = await waitFor(
      'the key refused as revoked',
      async () => {
        const r = await f.api.call('GET', '/v1/models', { key });
        expect(r.json.code).toBe('API_KEY_REVOKED');
        return r;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(revoked.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });
});
