// The operation of /v1/usage (docs/api.md "Usage").
import { op, ok } from './operation.ts';

const day = (name: string, description: string) => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  example: '2026-11-01',
});

export function usagePaths() {
  return {
    '/v1/usage': {
      get: op(
        {
          id: 'getUsage',
          tag: 'Usage',
          summary: 'Renders and spend over a range of days, grouped by day, model, key or member.',
          description:
            "Counts the renders created within the range (days in the server's day time zone, both ends included, at most 366) in the key's mode: a test key sees its account's test renders. `spentCents` is what they were charged less what was returned (a test render's price). Groups without renders are left out; without `groupBy`, one row holds the totals.",
          params: [
            day('from', 'First day (default: 29 days before `to`).'),
            day('to', 'Last day (default: today).'),
            {
              name: 'groupBy',
              in: 'query',
              description:
                'One or more of `day`, `model`, `key`, `member`, comma separated; rows are sorted by them in that order.',
              schema: {
                type: 'string',
                pattern: '^(day|model|key|member)(,(day|model|key|member)){0,3}$',
              },
              example: 'day,model',
            },
          ],
          ok: ok('The range and its rows.', 'Usage'),
        },
        'get',
      ),
    },
  };
}
