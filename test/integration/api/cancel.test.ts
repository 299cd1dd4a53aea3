// POST /v1/generations/{id}/cancel (docs/api.md "Cancel"): a queued render, waiting or running, becomes
// refunded with its charge returned and its running render stopped; refunded answers unchanged;
// succeeded and failed are 409. Racing a worker's completion and racing DELETE, the money moves once.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { queueDrained } from '../../helpers/db.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { runningFfmpegCount } from '../../../src/backends/local/ffmpeg.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '2' } });
const TEXT = 'rendergate/shot-list';
const text = { text: 'A gull lands on the pier. The tide turns. Night falls over the harbour.' };

const create = (key: string, modelId: string, inputs: object) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: { modelId, inputs },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
const cancel = (key: string, id: string) =>
  f.api.call('POST', `/v1/generations/${id}/cancel`, { key });
const balance = async (key: string) =>
  (await f.api.call('GET', '/v1/me', { key })).json.balanceCents as number;

const drain = () => queueDrained(f.dbh.db);

describe('cancel', () => {
  it('a running render is aborted, refunded and kept; a second cancel answers it unchanged; final ones are 409', async () => {
    const a = await f.api.account(100_000);
    const g = await create(a.key, 'rendergate/image-to-video', {
      prompt: 'pan left',
      image: f.img.url('/held/cancel.png'),
    });
    expect(g.status).toBe(202);
    // running: its worker is fetching the held image
    await waitFor('the render to fetch its image', () => f.img.hits['/held/cancel.png'] > 0);
    const started = (await f.api.call('GET', `/v1/generations/${g.json.id}`, { key: a.key })).json;
    expect(started.startedAt).not.toBeNull();
    const c1 = await cancel(a.key, g.json.id);
    expect(c1.status).toBe(200);
    expect(c1.json).toMatchObject({
      id: g.json.id,
      status: 'refunded',
      refundedCents: g.json.costCents,
      error: { code: 'CANCELLED' },
      progress: null,
      queuePosition: null,
    });
    expect(await balance(a.key)).toBe(100_000);
    const c2 = await cancel(a.key, g.json.id);
    expect([c2.status, c2.json]).toEqual([200, c1.json]);
    expect(
      (await f.api.call('GET', `/v1/generations/${g.json.id}`, { key: a.key })).json.status,
    ).toBe('refunded');
    // the running render stopped: its slot is free again and no ffmpeg of it is left
    f.img.release('/held/cancel.png');
    const next = await create(a.key, TEXT, text);
    expect((await f.api.waitFinal(a.key, next.json.id)).status).toBe('succeeded');
    expect(runningFfmpegCount()).toBe(0);

    const done = await cancel(a.key, next.json.id);
    expect([done.status, done.json.code, done.json.details]).toEqual([
      409,
      'GENERATION_NOT_CANCELLABLE',
      [{ status: 'succeeded' }],
    ]);
    const bad = await create(a.key, 'rendergate/image-to-video', {
      prompt: 'x',
      image: f.img.url('/missing.png'),
    });
    expect((await f.api.waitFinal(a.key, bad.json.id)).status).toBe('failed');
    expect((await cancel(a.key, bad.json.id)).json.details).toEqual([{ status: 'failed' }]);
    await checkInvariants(f.dbh.db);
  });

  it("is 404 for another account's, an unknown and a deleted generation", async () => {
    const a = await f.api.account(100_000);
    const b = await f.api.account(0);
    const g = await create(a.key, TEXT, text);
    expect((await cancel(b.key, g.json.id)).json.code).toBe('GENERATION_NOT_FOUND');
    expect((await cancel(a.key, 'gen_nope')).status).toBe(404);
    await f.api.call('DELETE', `/v1/generations/${g.json.id}`, { key: a.key });
    expect((await cancel(a.key, g.json.id)).status).toBe(404);
  });

  it('racing completion: each render ends succeeded (cancel 409) or refunded (cancel 200), the money moving once', async () => {
    const a = await f.api.account(1_000_000, { rateLimitPerMinute: 100_000 });
    const ids = [];
    for (let i = 0; i < 30; i++)
      ids.push((await create(a.key, TEXT, { text: `${text.text} Take ${i}.` })).json.id as string);
    // cancels spread over the renders' run, so some land before, some during and some after them
    const answers = await Promise.all(
      ids.map(async (id, i) => {
        await new Promise((r) => setTimeout(r, (i % 10) * 15));
        return cancel(a.key, id);
      }),
    );
    await drain();
    for (const [i, r] of answers.entries()) {
      const g = (await f.api.call('GET', `/v1/generations/${ids[i]}`, { key: a.key })).json;
      if (r.status === 200) expect([g.status, r.json.status]).toEqual(['refunded', 'refunded']);
      else
        expect([r.status, r.json.code, g.status]).toEqual([
          409,
          'GENERATION_NOT_CANCELLABLE',
          'succeeded',
        ]);
    }
    const { rows } = await f.dbh.db.query(
      `SELECT sum(cost_cents - refunded_cents)::int AS spent FROM generations WHERE account_id = $1`,
      [a.accountId],
    );
    expect(await balance(a.key)).toBe(1_000_000 - rows[0].spent);
    await checkInvariants(f.dbh.db);
  });

  it('racing DELETE: one refund whichever wins; the deleted one is gone', async () => {
    const a = await f.api.account(1_000_000, { rateLimitPerMinute: 100_000 });
    const ids = [];
    for (let i = 0; i < 20; i++) {
      ids.push(
        (
          await create(a.key, 'rendergate/image-to-video', {
            prompt: `p${i}`,
            image: f.img.url(`/held/race-${i}.png`),
          })
        ).json.id as string,
      );
    }
    const rs = await Promise.all(
      ids.flatMap((id) => [
        cancel(a.key, id),
        f.api.call('DELETE', `/v1/generations/${id}`, { key: a.key }),
        cancel(a.key, id),
      ]),
    );
    for (const r of rs) expect([200, 404]).toContain(r.status);
    for (let i = 0; i < 20; i++) f.img.release(`/held/race-${i}.png`);
    await drain();
    for (const id of ids)
      expect((await f.api.call('GET', `/v1/generations/${id}`, { key: a.key })).status).toBe(404);
    expect(await balance(a.key)).toBe(1_000_000);
    const { rows } = await f.dbh.db.query(
      `SELECT generation_id, count(*)::int AS n FROM ledger_entries WHERE kind = 'refund' AND generation_id = ANY ($1) GROUP BY 1`,
      [ids],
    );
    expect(rows.map((r) => r.n)).toEqual(ids.map(() => 1));
    await checkInvariants(f.dbh.db);
  });
});
