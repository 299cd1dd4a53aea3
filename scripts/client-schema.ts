// Generates packages/client/src/schema.ts, the SDK's types, from the OpenAPI document as the server
// builds it on the default catalog (openapi-typescript). `npm run generate:client` writes it; a test
// fails when the committed file differs from what this produces.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { loadCatalog } from '../src/backends/catalog.ts';
import { buildOpenApiDocument } from '../src/http/openapi/document.ts';

export const SCHEMA_FILE = fileURLToPath(
  new URL('../packages/client/src/schema.ts', import.meta.url),
);

export async function clientSchemaSource(): Promise<string> {
  const doc = buildOpenApiDocument(loadCatalog(), 'http://localhost:8080');
  const ast = await openapiTS(doc as never, { alphabetize: false, defaultNonNullable: false });
  return (
    '// Generated from GET /v1/openapi.json by `npm run generate:client` (openapi-typescript). Do not edit.\n' +
    astToString(ast)
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(SCHEMA_FILE, await clientSchemaSource());
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
}
