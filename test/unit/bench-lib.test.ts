// The benchmark's own arithmetic: percentiles, the profile summary and the table (bench/lib).
import { describe, expect, it } from 'vitest';
import { percentile, median, round } from '../../bench/lib/stats.ts';
import { summarise, type CpuProfile } from '../../bench/lib/profile.ts';
import { table, type Result } from '../../bench/lib/report.ts';

describe('bench stats', () => {
  it('takes percentiles by nearest rank, whatever the input order', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile(xs, 100)).toBe(100);
    expect(median([3, 1, 2])).toBe(2);
    expect(percentile([], 50)).toBeNull();
    expect(round(1.23456, 2)).toBe(1.23);
    expect(round(NaN)).toBeNull();
  });
});

describe('bench profile summary', () => {
  it('charges native frames to their user-land caller and drops idle and profiler time', () => {
    const cwd = process.cwd();
    const p: CpuProfile = {
      nodes: [
        {
          id: 1,
          callFrame: { functionName: '(root)', url: '', lineNumber: -1 },
          children: [2, 4, 5, 6],
        },
        {
          id: 2,
          callFrame: {
            functionName: 'query',
            url: `file://${cwd}/node_modules/pg/lib/client.js`,
            lineNumber: 9,
          },
          children: [3],
        },
        { id: 3, callFrame: { functionName: 'writev', url: '', lineNumber: -1 } },
        { id: 4, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
        { id: 5, callFrame: { functionName: 'post', url: 'node:inspector', lineNumber: 1 } },
        {
          id: 6,
          callFrame: {
            functionName: 'create',
            url: `file://${cwd}/src/services/generations.ts`,
            lineNumber: 40,
          },
        },
      ],
      samples: [3, 3, 3, 2, 4, 4, 5, 6],
      timeDeltas: [1000, 1000, 1000, 1000, 5000, 5000, 9000, 4000],
    };
    const s = summarise('t', 't.cpuprofile', p);
    expect(s.busyMs).toBe(8);
    expect(s.idleMs).toBe(10);
    expect(s.areas).toEqual([
      { area: 'pg', selfMs: 4, pct: 50 },
      { area: 'src/services/generations.ts', selfMs: 4, pct: 50 },
    ]);
    expect(s.functions[0]).toMatchObject({ fn: 'create', where: 'src/services/generations.ts:41' });
    expect(s.functions.find((f) => f.fn === 'writev')).toMatchObject({ area: 'pg', selfMs: 3 });
    expect(s.pausedMs).toBe(0);

    // A process stopped for 27 s (SIGSTOP) lands that gap on whatever sample comes next: not charged.
    const stopped = summarise('t', 't.cpuprofile', {
      ...p,
      timeDeltas: [1000, 1000, 1000, 1000, 5000, 5000, 9000, 27_000_000],
    });
    expect(stopped.busyMs).toBe(4);
    expect(stopped.pausedMs).toBe(27_000);
    expect(stopped.functions.find((f) => f.fn === 'create')).toBeUndefined();
  });
});

describe('bench table', () => {
  it('prints one line per result with its verdict', () => {
    const r: Result = {
      scenario: 'poll',
      variant: 'GET',
      concurrency: 64,
      rps: 45_000,
      p50: 1.2,
      p99: 8.5,
      baseline: { name: 'bare http', rps: 90_000 },
      ratio: 0.5,
      target: '≥0.50×',
      pass: true,
    };
    const lines = table([r, { ...r, pass: false, note: 'noisy' }]).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatch(
      /^poll\s+GET\s+64\s+45\.0k\s+1\.20\s+8\.50\s+bare http 90\.0k\/s\s+0\.50\s+≥0\.50×\s+pass$/,
    );
    expect(lines[3]).toMatch(/MISS \(noisy\)$/);
  });
});
