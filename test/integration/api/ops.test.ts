// Operations: liveness, readiness, and the Prometheus metrics an operator scrapes, after real traffic.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { awayFromMinuteEdge } from '../../helpers/minute.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture();

it('serves /healthz, /readyz and /metrics with the request, render, queue and money series', async () => {
  expect((await f.api.call('GET', '/healthz')).json).toEqual({ status: 'ok' });
  const ready = await f.api.call('GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.json.checks).toMatchObject({ database: 'ok', migrations: 'ok', storage: 'ok' });
  expect(ready.json.version).toBe(
    JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../../package.json'), 'utf8'))
      .version,
  );

  await awayFromMinuteEdge();
  const a = await f.api.account(1_000, { rateLimitPerMinute: 3 });
  const create = (image: string) =>
    f.api.call('POST', '/v1/generations', {
      key: a.key,
      body: { modelId: 'rendergate/image-to-video', inputs: { prompt: 'p', image } },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
  const ok = await create(f.img.url('/a.png'));
  const bad = await create(f.img.url('/missing.png'));
  expect((await f.api.call('GET', '/v1/me', { key: a.key })).status).toBe(200);
  expect((await f.api.call('GET', '/v1/me', { key: a.key })).status).toBe(429);
  for (const id of [ok.json.id, bad.json.id]) {
    await waitFor(
      `${id} to finish`,
      async () =>
        (await f.dbh.db.query('SELECT status FROM generations WHERE id = $1', [id])).rows[0]
          .status !== 'queued',
      { intervalMs: 200 },
    );
  }

  const text = (await f.api.call('GET', '/metrics')).text;
  const value = (line: RegExp) =>
    Number(
      text
        .split('\n')
        .find((l) => line.test(l))
        ?.split(' ')
        .pop(),
    );
  expect(
    value(
      /^rendergate_http_requests_total\{route="\/v1\/generations",method="POST",status="202"\}/,
    ),
  ).toBe(2);
  expect(
    value(/^rendergate_http_requests_total\{route="\/v1\/me",method="GET",status="429"\}/),
  ).toBe(1);
  expect(value(/^rendergate_rate_limit_denials_total /)).toBe(1);
  expect(
    value(/^rendergate_renders_total\{model="rendergate\/image-to-video",status="succeeded"\}/),
  ).toBe(1);
  expect(
    value(/^rendergate_renders_total\{model="rendergate\/image-to-video",status="failed"\}/),
  ).toBe(1);
  expect(value(/^rendergate_charged_cents_total /)).toBe(ok.json.costCents + bad.json.costCents);
  expect(value(/^rendergate_refunded_cents_total /)).toBe(bad.json.costCents);
  expect(value(/^rendergate_queue_depth /)).toBe(0);
  expect(text).toMatch(
    /^rendergate_http_request_duration_seconds_bucket\{le="0.005",route="\/v1\/me",method="GET"\} \d+/m,
  );
  expect(text).toMatch(
    /^rendergate_render_duration_seconds_count\{model="rendergate\/image-to-video"\} 2$/m,
  );
  expect(text).toMatch(
    /^rendergate_queue_wait_seconds_count\{model="rendergate\/image-to-video"\} 2$/m,
  );
});
