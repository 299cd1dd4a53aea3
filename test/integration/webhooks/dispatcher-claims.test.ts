// How often the webhook dispatcher claims (src/webhooks/dispatcher.ts): the end of an attempt claims
// again only when it frees room a claim could not have had (its endpoint or account at its in-flight
// cap, or every slot taken), so a delivery costs one claim, not two; and a backlog held back by the
// per-endpoint cap is still sent as each attempt ends. A real dispatcher on a real database, with a
// receiver in this process (test/helpers/webhook-receiver.ts); claims are counted by the statement's
// name on the pool the dispatcher is given.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { freshDatabase } from '../../helpers/db.ts';
import { waitFor } from '../../helpers/wait.ts';
import { webhookReceiver } from '../../helpers/webhook-receiver.ts';
import { WebhookDispatcher } from '../../../src/webhooks/dispatcher.ts';
import type { Db } from '../../../src/db/pool.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let rx: Awaited<ReturnType<typeof webhookReceiver>>;
beforeAll(async () => {
  dbh = await freshDatabase();
  rx = await webhookReceiver();
});
afterAll(async () => {
  await rx?.close();
  await dbh?.drop();
});

/** The pool, counting the claims made through it. */
function counting(db: Db) {
  const seen = { claims: 0 };
  const wrapped = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return (q: { name?: string }, ...rest: unknown[]) => {
          if (q?.name === 'webhook-claim-fair') seen.claims++;
          return (target.query as (...a: unknown[]) => unknown).call(target, q, ...rest);
        };
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { db: wrapped, seen };
}

const q = (sql: string, values: unknown[] = []) => dbh.db.query(sql, values);
const delivered = async (ids: string[]) =>
  (
    await q(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ANY($1) AND status = 'delivered'`,
      [ids],
    )
  ).rows[0].n as number;

describe('the webhook dispatcher', () => {
  it('claims once per delivery, and sends a backlog held back by the endpoint cap', async () => {
    await q(`INSERT INTO accounts (id, email) VALUES ('acc_d', 'd@claims.test')`);
    await q(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, secret)
       VALUES ('we_d', 'acc_d', $1, '{generation.succeeded}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`,
      [rx.url('/ok')],
    );
    const { db, seen } = counting(dbh.db);
    const dispatcher = (perEndpoint?: number) =>
      new WebhookDispatcher({
        db,
        databaseUrl: dbh.url,
        log: pino({ level: 'silent' }),
        retrySeconds: [5],
        allowPrivateUrls: true,
        view: (snap) => snap,
        perEndpoint,
      });
    const first = dispatcher();
    await first.start();
    try {
      // One at a time, each woken by the trigger's NOTIFY as a render's would be.
      const one: string[] = [];
      const claims0 = seen.claims;
      const t0 = Date.now();
      for (let i = 0; i < 20; i++) {
        const id = `wd_one_${i}`;
        await q(
          `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot)
           VALUES ($1, $1, 'we_d', 'generation.succeeded', $1, '{}')`,
          [id],
        );
        await q(`SELECT pg_notify('rendergate_webhooks', '')`);
        await waitFor(`delivery ${id}`, async () => (await delivered([id])) === 1);
        one.push(id);
      }
      // The dispatcher also claims once per second by itself (its poll), whatever the traffic; a
      // claim after each attempt as well would make it about two per delivery.
      const polls = Math.ceil((Date.now() - t0) / 1000) + 1;
      expect(seen.claims - claims0).toBeLessThanOrEqual(one.length + polls + 2);
    } finally {
      await first.stop();
    }

    // A backlog of five due at once to an endpoint that takes one attempt at a time: each ended
    // attempt frees the cap, and the next one is claimed.
    const second = dispatcher(1);
    try {
      const backlog = Array.from({ length: 5 }, (_, i) => `wd_backlog_${i}`);
      await q(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, type, generation_id, snapshot)
         SELECT id, id, 'we_d', 'generation.succeeded', id, '{}' FROM unnest($1::text[]) id`,
        [backlog],
      );
      await second.start();
      await waitFor('the backlog delivered', async () => (await delivered(backlog)) === 5);
      expect(rx.maxConcurrentPerId()).toBe(1);
    } finally {
      await second.stop();
    }
  });
});
