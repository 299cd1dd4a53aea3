// The release this code is: package.json's version, read once. Printed by `rendergate --version`,
// reported on /readyz and written into backups, so an operator can tell which release answers.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_JSON = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../package.json',
);

export const VERSION: string = (
  JSON.parse(fs.readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }
).version;
