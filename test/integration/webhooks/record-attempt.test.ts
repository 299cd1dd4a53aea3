// An attempt's result and its endpoint's outcome, recorded by one statement (src/db/webhook-deliveries.ts
// recordAttempt): the result only while the worker still holds the delivery at the attempt it claimed;
// the outcome whatever that fence says: failures in a row counted, the endpoint paused from the
// PAUSE_AFTER_FAILURES-th one (doubling, at most the maximum), all cleared by a success.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { recordAttempt } from '../../../src/db/webhook-deliveries.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  dbh = await freshDatabase();
});
afterAll(async () => {
  await dbh?.drop();
});

const endpoint = async () => {
  const { rows } = await dbh.db.query<{ f: number; pause: number | null }>(
    `SELECT failures_in_row AS f, round(extract(epoch FROM paused_until - now()))::int AS pause
     FROM webhook_endpoints WHERE id = 'we_1'`,
  );
  return rows[0];
};
const delivery = async () =>
  (
    await dbh.db.query<{ status: string; attempts: number; last_error: string | null }>(
      `SELECT status, attempts, last_error FROM webhook_deliveries WHERE id = 'wd_1'`,
    )
  ).rows[0];

it('records the result behind its fence and the outcome always, in one statement', async () => {
  const q = (sql: string) => dbh.db.query(sql);
  await q(`INSERT INTO accounts (id, email) VALUES ('acc_1', 'a@record.test')`);
  await q(`INSERT INTO webhook_endpoints (id, account_id, url, events, secret)
           VALUES ('we_1', 'acc_1', 'http://192.0.2.1/', '{generation.succeeded}', 's')`);
  await q(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot,
             lease_owner, lease_until)
           VALUES ('wd_1', 'ev_1', 'we_1', 'generation.succeeded', 'gen_1', '{}', 'me', now() + interval '30 s')`);
  const outcome = (ok: boolean) => ({
    endpointId: 'we_1',
    ok,
    pauseAfter: 3,
    pauseSeconds: 60,
    maxPauseSeconds: 200,
  });
  const fail = (owner: string, claimedAttempts: number) =>
    recordAttempt(dbh.db, {
      id: 'wd_1',
      owner,
      claimedAttempts,
      status: 'pending',
      response: 500,
      error: 'HTTP 500',
      attempts: claimedAttempts + 1,
      retryInSeconds: 5,
      endpoint: outcome(false),
    });

  await fail('me', 0);
  expect(await delivery()).toEqual({ status: 'pending', attempts: 1, last_error: 'HTTP 500' });
  expect(await endpoint()).toEqual({ f: 1, pause: null });
  // A worker that lost its lease records nothing of the delivery, but the endpoint did fail.
  await fail('someone else', 0);
  expect((await delivery()).attempts).toBe(1);
  expect(await endpoint()).toEqual({ f: 2, pause: null });
  await fail('someone else', 1);
  expect(await endpoint()).toEqual({ f: 3, pause: 60 }); // the 3rd in a row pauses it
  await fail('someone else', 1);
  expect(await endpoint()).toEqual({ f: 4, pause: 120 }); // doubling…
  await fail('someone else', 1);
  expect(await endpoint()).toEqual({ f: 5, pause: 200 }); // …at most the maximum

  // A success clears the failures and the pause; a delivery without an outcome leaves them.
  await q(
    `UPDATE webhook_deliveries SET lease_owner = 'me', lease_until = now() + interval '30 s'`,
  );
  await recordAttempt(dbh.db, {
    id: 'wd_1',
    owner: 'me',
    claimedAttempts: 1,
    status: 'delivered',
    response: 204,
    error: null,
    attempts: 2,
    endpoint: outcome(true),
  });
  expect(await delivery()).toEqual({ status: 'delivered', attempts: 2, last_error: 'HTTP 500' });
  expect(await endpoint()).toEqual({ f: 0, pause: null });
  await q(`UPDATE webhook_endpoints SET failures_in_row = 2`);
  await recordAttempt(dbh.db, {
    id: 'wd_1',
    owner: 'nobody',
    claimedAttempts: 2,
    status: 'failed',
    response: null,
    error: 'the endpoint was disabled or deleted',
    attempts: 2,
  });
  expect(await endpoint()).toEqual({ f: 2, pause: null });
});
