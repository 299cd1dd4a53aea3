// Poll: authenticated GET /v1/generations/{id} against a bare node:http server answering the very same
// JSON body (the ceiling of any Node HTTP service on this machine). The polled generation is queued,
// as it is while a client polls (role `api`: no worker takes it). The rows against the bare server are
// measured at LOG_LEVEL=silent, as every release's were, so that they compare the request path alone
// from one release to the next; a second process, started at the default level (info, one access line
// per request, written to a file) and switched to silent and back in interleaved rounds, shows what the
// lines cost, with a target of their own (bench/lib/log-levels.ts).
import type { BenchContext } from './lib/context.ts';
import { compareHttp, comparedRow, floorRow } from './lib/compare.ts';
import { compareLogLevels } from './lib/log-levels.ts';
import type { Result } from './lib/report.ts';
import {
  call,
  IMAGE_TO_VIDEO,
  makeAccount,
  nextIdempotencyKey,
  startRendergate,
} from './lib/service.ts';

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_poll');
  const svc = await startRendergate(ctx, url, { role: 'api' });
  const quiet = await startRendergate(ctx, url, {
    role: 'api',
    env: { LOG_LEVEL: 'silent' },
  }).catch(async (e) => {
    await svc.stop();
    throw e;
  });
  try {
    const acct = await makeAccount(svc.base);
    const created = await call(svc.base, 'POST', '/v1/generations', {
      key: acct.key,
      body: IMAGE_TO_VIDEO,
      headers: { 'idempotency-key': nextIdempotencyKey() },
    });
    if (created.status !== 202) throw new Error(`create -> ${created.status} ${created.text}`);
    const path = `/v1/generations/${created.json.id}`;
    const sample = await call(svc.base, 'GET', path, { key: acct.key });
    if (sample.status !== 200) throw new Error(`poll -> ${sample.status} ${sample.text}`);
    const variant = `GET /generations/{id} (${Buffer.byteLength(sample.text)} B)`;
    const rowVariant = `${variant}, silent`;
    const levels = await compareLogLevels(ctx, {
      scenario: 'poll',
      variant,
      request: { method: 'GET', headers: { authorization: `Bearer ${acct.key}` } },
      path,
      server: svc,
      c: 64,
      floor: 0.9,
    });
    const runs = await compareHttp(ctx, {
      name: 'poll',
      concurrencies: ctx.quick ? [16, 64] : [16, 64, 256],
      request: { method: 'GET', headers: { authorization: `Bearer ${acct.key}` } },
      rg: quiet,
      path,
      body: sample.text,
      floorAt: 64,
    });
    return [
      ...runs.flatMap((x) =>
        [
          comparedRow(
            'poll',
            rowVariant,
            'bare http',
            x,
            x.c === 64 ? '≥0.50×, p99≤10ms' : '≥0.50×',
            (ratio) => ratio >= 0.5 && (x.c !== 64 || (x.rg.p99 ?? Infinity) <= 10),
          ),
          floorRow('poll', x),
        ].filter((r) => r !== null),
      ),
      ...levels,
    ];
  } finally {
    await quiet.stop();
    await svc.stop();
  }
}
