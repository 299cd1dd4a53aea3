// The text model (rendergate/shot-list, mode shot_list, 20 items) at 1 KB, 8 KB and 20 KB of prose and
// on the worst input the review found (10,000 "a!", 20 KB), each in a fresh process: the median time
// of 3 renders and the process's peak memory over what it held once the language model was loaded.
// Baseline: the 1 KB render, per KB. The model must grow no faster than linearly with the text it is
// priced by, so each row's time per KB, over the baseline's, is the ratio (target: at most 2; a model
// quadratic in its input would be 8 at 8 KB and 20 at 20 KB). The render runs on a worker thread in
// the service; here it runs on the child's main thread, which measures the model alone.
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { BenchContext } from './lib/context.ts';
import type { Result } from './lib/report.ts';
import { round } from './lib/stats.ts';

const CHILD = path.join(import.meta.dirname, 'lib', 'text-model-child.ts');

interface Measured {
  ms: number;
  rssBeforeMb: number;
  peakRssMb: number;
}

function measure(kind: 'prose' | 'worst', bytes: number, repeats: number): Promise<Measured> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', CHILD, kind, String(bytes), String(repeats)],
      { timeout: 120_000 },
      (err, stdout) => {
        if (err) reject(new Error(`the text child failed: ${err.message}`, { cause: err }));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Measured);
      },
    );
  });
}

export async function run(ctx: BenchContext): Promise<Result[]> {
  const repeats = ctx.quick ? 1 : 3;
  const base = await measure('prose', 1024, repeats);
  const perKb = base.ms;
  const rows: Array<[string, 'prose' | 'worst', number]> = [
    ['prose 1 KB', 'prose', 1024],
    ['prose 8 KB', 'prose', 8192],
    ['prose 20 KB', 'prose', 20_000],
    ['worst 20 KB ("a!" x 10,000)', 'worst', 20_000],
  ];
  const results: Result[] = [];
  for (const [variant, kind, bytes] of rows) {
    const m = bytes === 1024 && kind === 'prose' ? base : await measure(kind, bytes, repeats);
    const kb = bytes / 1024;
    const ratio = m.ms / kb / perKb;
    const grewMb = Math.max(0, m.peakRssMb - m.rssBeforeMb);
    ctx.log(`text ${variant}: ${m.ms.toFixed(1)} ms, +${grewMb.toFixed(1)} MB`);
    results.push({
      scenario: 'text',
      variant,
      concurrency: 1,
      rps: null,
      p50: round(m.ms),
      p99: null,
      baseline: { name: '1 KB per KB', ms: round(perKb) },
      ratio: round(ratio),
      target: '<= 2 (linear)',
      pass: ratio <= 2,
      note: `+${grewMb.toFixed(0)} MB peak`,
      extra: {
        bytes,
        peakRssMb: round(m.peakRssMb, 1),
        rssBeforeMb: round(m.rssBeforeMb, 1),
        grewMb: round(grewMb, 1),
      },
    });
  }
  return results;
}
