// One real PostgreSQL for the whole test run; each test file creates its own database on it
// (test/helpers/db.ts), so files run in parallel without sharing rows. By default the embedded one, as
// the product runs it; with DATABASE_URL set (a superuser's URL ending in /postgres, as .ci/external-pg
// gives), an external server instead. DATABASE_URL is then taken out of the environment, so the
// services that tests start on a data dir of their own keep using their embedded database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const external = process.env.DATABASE_URL;
  if (external) {
    if (!/\/postgres$/.test(external))
      throw new Error('DATABASE_URL for tests must name the database "postgres"');
    delete process.env.DATABASE_URL;
    project.provide('pgUrl', external);
    return async () => {};
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rendergate-test-'));
  fs.chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres(path.join(dir, 'data'));
  project.provide('pgUrl', pg.url);
  return async () => {
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
