// The SDK's types (packages/client/src/schema.ts) are generated from the OpenAPI document: this fails
// when the committed file is not what the document gives today. Fix: `npm run generate:client`.
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { SCHEMA_FILE, clientSchemaSource } from '../../../scripts/client-schema.ts';

it('packages/client/src/schema.ts is generated from the current document (npm run generate:client)', async () => {
  const expected = await clientSchemaSource();
  const actual = fs.readFileSync(SCHEMA_FILE, 'utf8');
  expect(actual === expected, 'schema.ts is stale: run `npm run generate:client`').toBe(true);
});
