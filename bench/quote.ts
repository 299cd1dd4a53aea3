// Quote: POST /v1/quote (validate the inputs, price them) against a bare node:http server that reads
// the same request body and answers the same response body.
import type { BenchContext } from './lib/context.ts';
import { compareHttp, comparedRow, floorRow } from './lib/compare.ts';
import type { Result } from './lib/report.ts';
import { call, IMAGE_TO_VIDEO, makeAccount, startRendergate } from './lib/service.ts';

export async function run(ctx: BenchContext): Promise<Result[]> {
  const svc = await startRendergate(ctx, await ctx.pg.createDatabase('bench_quote'), { role: 'api' });
  try {
    const acct = await makeAccount(svc.base);
    const sample = await call(svc.base, 'POST', '/v1/quote', { key: acct.key, body: IMAGE_TO_VIDEO });
    if (sample.status !== 200) throw new Error(`quote -> ${sample.status} ${sample.text}`);
    const runs = await compareHttp(ctx, {
      name: 'quote', concurrencies: ctx.quick ? [16, 64] : [16, 64, 256],
      request: {
        method: 'POST', body: JSON.stringify(IMAGE_TO_VIDEO),
        headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
      },
      rg: svc, path: '/v1/quote', body: sample.text, floorAt: 64,
    });
    return runs.flatMap((x) => [comparedRow('quote', `POST /quote (${Buffer.byteLength(sample.text)} B)`, 'bare http', x, '≥0.40×', (ratio) => ratio >= 0.4),
      floorRow('quote', x)].filter((r) => r !== null));
  } finally {
    await svc.stop();
  }
}
