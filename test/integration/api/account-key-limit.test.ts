// An account's keys share one rate limit, the highest among its live keys (src/admission/rate-limits.ts
// consumeKey, docs/account-limits.md "Requests"): an owner who makes a hundred keys at the ceiling
// gets no more requests a minute than one of them alone; a key of its own account counts only itself.
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { awayFromMinuteEdge } from '../../helpers/minute.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '0' } });

it("refuses past the highest limit among an account's keys, counted over all of them", async () => {
  await awayFromMinuteEdge(20_000);
  const a = await f.api.account(0, { rateLimitPerMinute: 5 });
  const more = [];
  for (let i = 0; i < 2; i++)
    more.push(
      (await f.api.admin('POST', `/accounts/${a.accountId}/keys`, { rateLimitPerMinute: 5 }))
        .key as string,
    );
  // a revoked key is not counted: three live keys of 5
  const gone = await f.api.admin('POST', `/accounts/${a.accountId}/keys`, {
    rateLimitPerMinute: 50,
  });
  await f.api.admin('DELETE', `/keys/${gone.id}`);
  const keys = [a.key, ...more];
  const got = [];
  for (let i = 0; i < 9; i++) got.push(await f.api.call('GET', '/v1/me', { key: keys[i % 3] }));
  expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429]);
  expect(got[5].json).toMatchObject({ code: 'RATE_LIMITED' });
  expect(got[5].json.message).toMatch(
    /^More than 5 requests a minute on this account's keys together/,
  );
  expect(got[5].headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
  expect(Number(got[5].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  // what is left is the tighter of the two
  expect(got[3].headers.get('ratelimit')).toMatch(/^"default";r=1;/);

  // another account with one key: its own 5, not behind the first account's
  const b = await f.api.account(0, { rateLimitPerMinute: 5 });
  const own = [];
  for (let i = 0; i < 6; i++) own.push(await f.api.call('GET', '/v1/me', { key: b.key }));
  expect(own.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
  expect(own[5].json.message).toMatch(/^More than 5 requests a minute on this key;/);
});
