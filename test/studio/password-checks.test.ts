// Password checks one at a time (RENDERGATE_PASSWORD_CHECKS_AT_ONCE=1, src/services/passwords.ts
// PasswordWork), attacked as a stranger with many addresses would: thirty addresses each send their
// ten wrong passwords at once (each within its own throttle), 300 argon2 checks of about 12 ms for one
// process. They wait their turn; past the 100 waiting, the rest are refused at once with 503 and
// Retry-After, never a 500, and the attempt is given back; the queue drains, and the owner then signs
// in. Without the queue all 300 ran at once on every thread the process had, and none was refused.
// The give-backs beside the takes of the other addresses once ended in "deadlock detected" and a 500
// (src/db/studio-attempts.ts giveBackAttempt, one row per statement since).
import { expect, it } from 'vitest';
import { serviceFixture } from '../helpers/fixture.ts';
import { PASSWORD } from './helpers.ts';
import { StudioSession } from './http-session.ts';

const f = serviceFixture({
  env: { RENDERGATE_WORKER_CONCURRENCY: '0', RENDERGATE_PASSWORD_CHECKS_AT_ONCE: '1' },
});
const from = (ip: string) => new StudioSession(f.svc.base, f.svc.base, ip);

it('queues 300 parallel checks one at a time, refuses past 100 waiting and gives those back, then signs the owner in', async () => {
  const email = await from('127.0.0.1').signUp();
  const strangers = Array.from({ length: 30 }, (_, i) => from(`127.0.0.${10 + i}`));
  await Promise.all(strangers.map((s) => s.get('/signin')));
  const answers = await Promise.all(
    strangers.flatMap((s, i) =>
      Array.from({ length: 10 }, () =>
        s.post('/signin', { email: `stranger-${i}@example.test`, password: 'not the password' }),
      ),
    ),
  );
  const statuses = answers.map((a) => a.status);
  const busy = answers.filter((a) => a.status === 503);
  // one running and 100 waiting at most: those that came while it was full were refused (how many
  // depends on how fast they came, against 12 ms a check)
  expect(busy.length).toBeGreaterThanOrEqual(1);
  expect(statuses.filter((s) => s === 401).length).toBe(300 - busy.length);
  for (const b of busy) {
    expect(Number(b.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(b.text).toContain('Too many passwords are being checked at once');
  }
  // a refused check counted for nothing: an address keeps the tries the 503s gave back, then no more
  const busyOf = strangers.map((_, i) =>
    answers.slice(i * 10, i * 10 + 10).filter((a) => a.status === 503),
  );
  const i = busyOf.findIndex((b) => b.length > 0);
  const again = async () =>
    (
      await strangers[i].post('/signin', {
        email: `stranger-${i}@example.test`,
        password: 'not the password',
      })
    ).status;
  for (let k = 0; k < busyOf[i].length; k++) expect(await again()).toBe(401);
  expect(await again()).toBe(429);
  const owner = from('127.0.0.50');
  await owner.get('/signin');
  expect((await owner.post('/signin', { email, password: PASSWORD })).status).toBe(303);
});
