// `Prefer: wait` held requests are shared between accounts (src/admission/waiters.ts): one account holds
// at most a tenth of RENDERGATE_MAX_WAITERS; past it its requests are answered at once, as without the
// header, while another account's are still held.
import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { waitFor } from '../../helpers/wait.ts';

// no worker: the test finishes the render itself, through the database; 2 held requests an account
const f = serviceFixture({ role: 'api', env: { RENDERGATE_MAX_WAITERS: '20' } });

const held = async () =>
  Number(
    /^rendergate_held_requests (\d+)$/m.exec(
      await (await fetch(`${f.svc.base}/metrics`)).text(),
    )![1],
  );

it("answers an account's requests past its share at once, and still holds another account's", async () => {
  const a = await f.api.account(10_000);
  const b = await f.api.account(10_000);
  const create = (key: string) =>
    f.api.call('POST', '/v1/generations', {
      key,
      body: { modelId: 'rendergate/shot-list', inputs: { text: 'The tide turns. A gull lands.' } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
  const ga = (await create(a.key)).json.id as string;
  const gb = (await create(b.key)).json.id as string;
  const wait = (key: string, id: string) =>
    f.api.call('GET', `/v1/generations/${id}`, { key, headers: { prefer: 'wait=30' } });
  const heldA = [wait(a.key, ga), wait(a.key, ga)];
  await waitFor('2 held', async () => (await held()) === 2);
  // the account's third: at once, queued, without Preference-Applied
  const third = await wait(a.key, ga);
  expect([third.status, third.json.status, third.headers.get('preference-applied')]).toEqual([
    200,
    'queued',
    null,
  ]);
  // another account's is held
  const heldB = wait(b.key, gb);
  await waitFor('3 held', async () => (await held()) === 3);
  await f.dbh.db.query(
    `UPDATE generations SET status = 'succeeded', text_output = 'done', completed_at = now(),
       started_at = coalesce(started_at, now()) WHERE id = ANY ($1)`,
    [[ga, gb]],
  );
  for (const r of await Promise.all([...heldA, heldB])) {
    expect([r.status, r.json.status, r.headers.get('preference-applied')]).toEqual([
      200,
      'succeeded',
      'wait=30',
    ]);
  }
  expect(await held()).toBe(0);
});
