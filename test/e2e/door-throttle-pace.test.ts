// The studio doors' own throttles keep their refusals late too (src/admission/door-budget.ts doorScope,
// docs/account-limits.md "Refusals that keep coming"): wrong passwords past the throttle, sign-ups past
// an address's hour and wrong console tokens past an address's quarter hour, each flooded from two
// loops as the soak's attacker floods the sign-in, get their first refusals at once and then about one
// a second a loop. Unpaced, two loops got 6,391 sign-in refusals in 4 s, 7,826 sign-up refusals and
// 8,696 console refusals, each a full page.
// The doors' budget per address is off here, so only the throttles refuse.
import { expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { ADMIN } from '../helpers/service.ts';
import { expectPaced, flood } from '../helpers/refusal-flood.ts';
import { PASSWORD, uniqueEmail } from '../studio/helpers.ts';
import { StudioSession } from '../studio/http-session.ts';
import { waitFor } from '../helpers/wait.ts';

const BURST = 5;
const FLOOD_MS = 4_000;
const f = serviceFixture({
  env: {
    RENDERGATE_WORKER_CONCURRENCY: '0',
    RENDERGATE_STUDIO_DOOR_REQUESTS_PER_MINUTE: '0',
    RENDERGATE_SIGNUPS_PER_HOUR: '1',
    RENDERGATE_REFUSAL_PACE_BURST: String(BURST),
  },
});
const from = (ip: string) => new StudioSession(f.svc.base, f.svc.base, ip);

it("holds an address's wrong-password 429s; the owner signs in from elsewhere meanwhile", async () => {
  const email = await from('127.0.0.1').signUp();
  const attacker = from('127.0.0.2');
  await attacker.get('/signin');
  const owner = from('127.0.0.3');
  let throttled = 0;
  const wrong = async () => {
    const r = await attacker.post('/signin', { email, password: 'not the password' });
    if (r.status === 429) throttled++;
    return r;
  };
  let over = false;
  const attack = flood(wrong, FLOOD_MS).finally(() => (over = true));
  const [got, signedIn] = await Promise.all([
    attack,
    (async () => {
      // The owner comes once the attacker's address is throttled (or the flood is over without it,
      // which the checks below then report).
      await waitFor('the attacker throttled', () => throttled > 0 || over);
      await owner.get('/signin');
      return (await owner.post('/signin', { email, password: PASSWORD })).status;
    })(),
  ]);
  // ten wrong passwords checked, then the throttle's page, paced
  expect(got.filter((g) => g.status === 401)).toHaveLength(10);
  const refused = got.filter((g) => g.status === 429);
  expect(refused).toHaveLength(got.length - 10);
  for (const g of refused) expect(Number(g.retryAfter)).toBeGreaterThanOrEqual(1);
  expectPaced(refused, BURST, FLOOD_MS);
  expect(signedIn).toBe(303);
});

it("holds an address's sign-up 429s past its hour's sign-ups", async () => {
  const stranger = from('127.0.0.4');
  await stranger.get('/signup');
  const got = await flood(
    () => stranger.post('/signup', { email: uniqueEmail(), password: PASSWORD }),
    FLOOD_MS,
  );
  expect(got.filter((g) => g.status === 303)).toHaveLength(1);
  const refused = got.filter((g) => g.status === 429);
  expect(refused).toHaveLength(got.length - 1);
  expectPaced(refused, BURST, FLOOD_MS);
});

it("holds an address's console 429s past its wrong tokens; the operator signs in from elsewhere", async () => {
  const attacker = from('127.0.0.5');
  await attacker.get('/admin');
  const got = await flood(
    () => attacker.post('/admin/signin', { token: 'wrong token, wrong token' }),
    FLOOD_MS,
  );
  expect(got.filter((g) => g.status === 401)).toHaveLength(10);
  const refused = got.filter((g) => g.status === 429);
  expect(refused).toHaveLength(got.length - 10);
  expectPaced(refused, BURST, FLOOD_MS);
  const operator = from('127.0.0.6');
  await operator.get('/admin');
  expect((await operator.post('/admin/signin', { token: ADMIN })).status).toBe(303);
});
