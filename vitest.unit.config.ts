// `npm run test:unit`: the unit tests only, in seconds. No PostgreSQL is started (no global setup), so
// a test under test/unit/ must not need one; everything that does lives under test/integration/ and
// the other folders `npm test` runs.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
