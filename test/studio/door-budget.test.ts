// The studio's doors' budget per address (docs/account-limits.md): past it, an address is answered a
// constant 429 before any cookie, CSRF, page or statement work, while other addresses come in as
// before; requests are sent from two loopback addresses (127.0.0.2, 127.0.0.3).
import { expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { fetchFrom } from '../helpers/fetch-from.ts';
import { PASSWORD } from './helpers.ts';
import { StudioSession } from './http-session.ts';

const BUDGET = 6;
const f = serviceFixture({
  env: {
    RENDERGATE_WORKER_CONCURRENCY: '0',
    RENDERGATE_STUDIO_DOOR_REQUESTS_PER_MINUTE: String(BUDGET),
  },
});

it('refuses a flooding address at the door, cheaply, and lets another address sign in', async () => {
  // The owner signs up from an address of their own (two door requests of its budget).
  const owner = new StudioSession(f.svc.base, f.svc.base, '127.0.0.3');
  const email = await owner.signUp();
  const attacker = new StudioSession(f.svc.base, f.svc.base, '127.0.0.2');
  const got: number[] = [];
  for (let i = 0; i < BUDGET; i++) {
    const r =
      i % 2
        ? await attacker.post('/signin', { email, password: `wrong ${i}` })
        : await attacker.get('/signin');
    got.push(r.status);
  }
  // within the budget: the form, then the sign-in throttle's own answer (401 for a wrong password)
  expect(got).toEqual([200, 401, 200, 401, 200, 401]);

  const refused = await fetchFrom('127.0.0.2', `${f.svc.base}/signin`);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  // no CSRF secret made, no form: the answer is the constant page
  expect(refused.headers.getSetCookie()).toEqual([]);
  const page = await refused.text();
  expect(page).toContain('Too many requests');
  expect(page).not.toContain('_csrf');
  expect(refused.headers.get('content-security-policy')).toContain("default-src 'self'");

  // A wrong password past the budget is refused before the sign-in throttle counts it.
  const before = await f.dbh.db.query<{ n: number }>(
    `SELECT coalesce(sum(attempts), 0)::int AS n FROM studio_attempts WHERE scope LIKE 'signin-ip:127.0.0.2'`,
  );
  const post = await attacker.post('/signin', { email, password: 'wrong again' });
  expect(post.status).toBe(429);
  expect(post.text).toContain('Too many requests');
  const after = await f.dbh.db.query<{ n: number }>(
    `SELECT coalesce(sum(attempts), 0)::int AS n FROM studio_attempts WHERE scope LIKE 'signin-ip:127.0.0.2'`,
  );
  expect(after.rows[0].n).toBe(before.rows[0].n);
  // so is the right one, from that address, until its budget refills…
  expect((await attacker.post('/signin', { email, password: PASSWORD })).status).toBe(429);

  // …but the owner, from another address, signs in and uses the studio.
  const again = new StudioSession(f.svc.base, f.svc.base, '127.0.0.3');
  expect((await again.get('/signin')).status).toBe(200);
  expect((await again.post('/signin', { email, password: PASSWORD })).status).toBe(303);
  expect((await again.get('/history')).status).toBe(200);

  // The API is no door: a key from the refused address is served.
  const key = (await f.api.account(0)).key;
  const me = await fetchFrom('127.0.0.2', `${f.svc.base}/v1/me`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(me.status).toBe(200);
});
