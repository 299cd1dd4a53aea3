// The OpenAPI document passes Redocly's and Spectral's recommended rules with no errors (scripts/lint-openapi.ts).
import { expect, it } from 'vitest';
import { lintOpenApi } from '../../../scripts/lint-openapi.ts';

it("passes Redocly's and Spectral's recommended rules with no errors", async () => {
  const results = await lintOpenApi();
  for (const r of results) expect(r.ok, `${r.tool}:\n${r.output}`).toBe(true);
  expect(results.map((r) => r.tool)).toEqual(['redocly', 'spectral']);
}, 180_000);
