// A chat server's `usage` (src/backends/openai/index.ts usageOf): taken only as two whole counts a
// PostgreSQL integer holds, so a server's odd answer is counted here instead, never a failed render.
import { expect, it } from 'vitest';
import { usageOf } from '../../../src/backends/openai/index.ts';

it('takes prompt and completion counts, and nothing else', () => {
  expect(usageOf({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })).toEqual({
    input: 12,
    output: 3,
  });
  expect(usageOf({ prompt_tokens: 0, completion_tokens: 0 })).toEqual({ input: 0, output: 0 });
});

it('ignores what is not two whole counts in range', () => {
  for (const bad of [
    undefined,
    null,
    'usage',
    [],
    { prompt_tokens: 12 },
    { prompt_tokens: -1, completion_tokens: 3 },
    { prompt_tokens: 1.5, completion_tokens: 3 },
    { prompt_tokens: '12', completion_tokens: 3 },
    { prompt_tokens: 2 ** 31, completion_tokens: 3 },
    { prompt_tokens: Number.NaN, completion_tokens: 3 },
  ])
    expect(usageOf(bad)).toBeUndefined();
});
