// Quote: POST /v1/quote (validate the inputs, price them) against a bare node:http server that reads
// the same request body and answers the same response body. As for poll, the rows against the bare
// server are measured at LOG_LEVEL=silent (the request path alone, comparable from release to release);
// a second process at the default level (info), switched to silent and back, shows what the access
// lines cost (reported; the target is on poll's, the request with the least work of its own and so the
// most to lose to a log line).
import type { BenchContext } from './lib/context.ts';
import { compareHttp, comparedRow, floorRow } from './lib/compare.ts';
import { compareLogLevels } from './lib/log-levels.ts';
import type { Result } from './lib/report.ts';
import { call, IMAGE_TO_VIDEO, makeAccount, startRendergate } from './lib/service.ts';

export async function run(ctx: BenchContext): Promise<Result[]> {
  const url = await ctx.pg.createDatabase('bench_quote');
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
    const sample = await call(svc.base, 'POST', '/v1/quote', {
      key: acct.key,
      body: IMAGE_TO_VIDEO,
    });
    if (sample.status !== 200) throw new Error(`quote -> ${sample.status} ${sample.text}`);
    const request = {
      method: 'POST' as const,
      body: JSON.stringify(IMAGE_TO_VIDEO),
      headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
    };
    const variant = `POST /quote (${Buffer.byteLength(sample.text)} B)`;
    const levels = await compareLogLevels(ctx, {
      scenario: 'quote',
      variant,
      request,
      path: '/v1/quote',
      server: svc,
      c: 64,
      floor: null,
    });
    const runs = await compareHttp(ctx, {
      name: 'quote',
      concurrencies: ctx.quick ? [16, 64] : [16, 64, 256],
      request,
      rg: quiet,
      path: '/v1/quote',
      body: sample.text,
      floorAt: 64,
    });
    return [
      ...runs.flatMap((x) =>
        [
          comparedRow(
            'quote',
            `${variant}, silent`,
            'bare http',
            x,
            '≥0.40×',
            (ratio) => ratio >= 0.4,
          ),
          floorRow('quote', x),
        ].filter((r) => r !== null),
      ),
      ...levels,
    ];
  } finally {
    await quiet.stop();
    await svc.stop();
  }
}
