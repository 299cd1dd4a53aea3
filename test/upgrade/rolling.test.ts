// Rolling upgrades (docs/upgrades.md): while the new release's migrations are applied, processes of the
// previous release keep serving on the same database. test/fixtures/previous-release.json records what
// that release sends to PostgreSQL (record-release.ts ran its own tests and kept every statement its
// src/ sent) and the migrations it had. Here: its migrations are untouched, every one of its statements
// still prepares against the schema after all of ours (tables, columns, types, functions and their
// signatures all still there), and no migration since makes a change the rule forbids.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationFiles } from '../../src/db/migrate.ts';
import { freshDatabase } from '../helpers/db.ts';
import { breakingChanges } from './migration-rules.ts';

const MIGRATIONS = path.resolve(import.meta.dirname, '../../migrations');
const previous = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../fixtures/previous-release.json'), 'utf8'),
) as {
  release: { commit: string; version: string };
  migrations: { name: string; sha256: string }[];
  statements: string[];
};

describe(`the previous release (${previous.release.version}, ${previous.release.commit.slice(0, 7)}) beside this one`, () => {
  let dbh: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    dbh = await freshDatabase();
  });
  afterAll(async () => {
    await dbh?.drop();
  });

  it('finds its migrations unchanged, in their place', () => {
    const changed = previous.migrations.filter((m) => {
      const file = path.join(MIGRATIONS, m.name);
      return (
        !fs.existsSync(file) ||
        crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex') !== m.sha256
      );
    });
    expect(changed.map((m) => m.name)).toEqual([]);
  });

  it('can still prepare every statement it sends against the schema of all current migrations', async () => {
    expect(previous.statements.length).toBeGreaterThan(30);
    const client = await dbh.db.connect();
    const failures: string[] = [];
    try {
      for (const [i, sql] of previous.statements.entries()) {
        try {
          // PREPARE parses and plans against the schema (every table, column, type, function) without running it.
          await client.query(`PREPARE previous_${i} AS ${sql}`);
          await client.query(`DEALLOCATE previous_${i}`);
        } catch (e) {
          failures.push(
            `${(e as Error).message}\n    in: ${sql.replace(/\s+/g, ' ').slice(0, 200)}`,
          );
        }
      }
    } finally {
      client.release();
    }
    expect(failures).toEqual([]);
  });

  it('meets no migration added since that breaks it', () => {
    const known = new Set(previous.migrations.map((m) => m.name));
    const added = migrationFiles().filter((f) => !known.has(f));
    const findings = added.flatMap((f) =>
      breakingChanges(f, fs.readFileSync(path.join(MIGRATIONS, f), 'utf8')),
    );
    expect(findings).toEqual([]);
  });
});

describe('the migration rule itself', () => {
  const cases: [string, boolean][] = [
    ['ALTER TABLE generations DROP COLUMN inputs;', true],
    ['ALTER TABLE accounts RENAME COLUMN name TO display_name;', true],
    ['ALTER TABLE accounts ALTER COLUMN email TYPE varchar(100);', true],
    ['ALTER TABLE accounts ALTER COLUMN name SET NOT NULL;', true],
    ['ALTER TABLE accounts ADD COLUMN plan text NOT NULL;', true],
    ['DROP TABLE rate_limits;', true],
    ["ALTER TABLE accounts ADD COLUMN plan text NOT NULL DEFAULT 'free';", false],
    ['ALTER TABLE accounts ADD COLUMN plan text;', false],
    ['CREATE TABLE uploads (id text PRIMARY KEY, bytes bigint NOT NULL);', false],
    ['CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;', false],
    [
      '-- contract: 0.3 stopped reading it (see 0.3 release notes)\nALTER TABLE generations DROP COLUMN legacy;',
      false,
    ],
  ];
  it.each(cases)('%s → breaking: %s', (sql, breaking) => {
    expect(breakingChanges('x.sql', sql).length > 0).toBe(breaking);
  });
});
