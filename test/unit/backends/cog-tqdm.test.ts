// Progress read from Cog logs: tqdm's `N%|` form and its `n/total [` form, the latest line winning.
import { expect, it } from 'vitest';
import { tqdmProgress } from '../../../src/backends/cog/tqdm.ts';

it('reads the latest tqdm line of the logs', () => {
  expect(
    tqdmProgress(
      ' 10%|█         | 1/10 [00:00<00:09, 1.0it/s]\r 20%|██        | 2/10 [00:01<00:08]\r',
    ),
  ).toBe(0.2);
  expect(
    tqdmProgress('loading weights\n 37%|███▋      | 37/100 [00:10<00:17]\nsampling...\n'),
  ).toBe(0.37);
  expect(tqdmProgress('step: 12/48 [00:03<00:09, 4.0it/s]\n')).toBe(0.25);
  expect(
    tqdmProgress('100%|██████████| 50/50 [00:12<00:00]\n  4%|▍         | 2/50 [00:00<00:12]\n'),
  ).toBe(0.04);
  expect(tqdmProgress('Sampling: 55.5%|█████▌    |')).toBeCloseTo(0.555);
});

it('finds nothing where no bar is', () => {
  for (const logs of [undefined, null, '', 'no progress here\n', 'date 2026/11/23 ok', '0/0 ['])
    expect(tqdmProgress(logs)).toBeUndefined();
});
