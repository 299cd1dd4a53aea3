// SQL functions as files (src/db/sql-functions.ts): a database ends with exactly the body its file
// holds, whether it is fresh, upgraded from the previous release, or replaced meanwhile by a
// historic migration; a changed file is applied once, an older process never puts an older body
// back, and no numbered migration defines a function any more.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationFiles } from '../../src/db/migrate.ts';
import { createPool, type Db } from '../../src/db/pool.ts';
import { appliedWith, functionFiles, type FunctionFile } from '../../src/db/sql-functions.ts';
import { emptyDatabase, freshDatabase } from '../helpers/db.ts';
import { waitFor } from '../helpers/wait.ts';

const MIGRATIONS = path.resolve(import.meta.dirname, '../../migrations');
const previous = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../fixtures/previous-release.json'), 'utf8'),
) as { migrations: { name: string }[] };

/** The body between the dollar quotes of a function file: what pg_proc.prosrc holds. */
function bodyOf(file: string): string {
  const text = fs.readFileSync(file, 'utf8');
  const open = text.indexOf('$$');
  return text.slice(open + 2, text.lastIndexOf('$$'));
}

/** The function name a file defines. */
const nameOf = (file: string) =>
  /CREATE OR REPLACE FUNCTION\s+(\w+)\s*\(/i.exec(fs.readFileSync(file, 'utf8'))![1];

async function bodyInDatabase(db: Db, name: string): Promise<string[]> {
  const { rows } = await db.query<{ prosrc: string }>(
    'SELECT prosrc FROM pg_proc WHERE proname = $1',
    [name],
  );
  return rows.map((r) => r.prosrc);
}

describe('the function files of this release', () => {
  const files = functionFiles();

  it('include the create function, in src/ledger/sql/', () => {
    expect(files.map((f) => f.name)).toContain('ledger/sql/create_generations.sql');
  });

  it('define exactly the live function of a fresh database', async () => {
    const dbh = await freshDatabase();
    try {
      for (const f of files)
        expect(await bodyInDatabase(dbh.db, nameOf(f.path))).toEqual([bodyOf(f.path)]);
      expect(await migrate(dbh.db)).toEqual([]); // nothing left to apply
    } finally {
      await dbh.drop();
    }
  });

  it('replace the historic bodies of a database upgraded from the previous release', async () => {
    const empty = await emptyDatabase();
    const db = createPool(empty.url, 2, { long: true });
    try {
      const theirs = new Set(previous.migrations.map((m) => m.name));
      await migrate(db, MIGRATIONS, theirs);
      const create = files.find((f) => f.name === 'ledger/sql/create_generations.sql')!;
      // The previous release's own body is there, and it is not this file's.
      const before = await bodyInDatabase(db, 'rendergate_create_generations');
      expect(before).toHaveLength(1);
      expect(before[0]).not.toBe(bodyOf(create.path));
      const applied = await migrate(db);
      // each migration, followed by the files applied with it; then every file, as migrations ran
      expect(applied).toEqual([
        ...migrationFiles()
          .filter((m) => !theirs.has(m))
          .flatMap((m) => [m, ...files.filter((f) => appliedWith(f) === m).map((f) => f.name)]),
        ...files.map((f) => f.name),
      ]);
      for (const f of files)
        expect(await bodyInDatabase(db, nameOf(f.path))).toEqual([bodyOf(f.path)]);
    } finally {
      await db.end();
      await empty.drop();
    }
  });
});

describe('the migrator, with a function file and migrations of its own', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-fn-files-'));
  const migrations = path.join(dir, 'migrations');
  const fnFile: FunctionFile = { name: 'x/sql/answer.sql', path: path.join(dir, 'answer.sql') };
  const define = (n: number) =>
    `CREATE OR REPLACE FUNCTION rg_answer() RETURNS int LANGUAGE sql AS $$ SELECT ${n} $$;`;
  let empty: Awaited<ReturnType<typeof emptyDatabase>>;
  let db: Db;
  const run = () => migrate(db, migrations, undefined, [fnFile]);
  const answer = async () => (await db.query<{ n: number }>('SELECT rg_answer() AS n')).rows[0].n;

  beforeAll(async () => {
    fs.mkdirSync(migrations);
    empty = await emptyDatabase();
    db = createPool(empty.url, 2, { long: true });
  });
  afterAll(async () => {
    await db.end();
    await empty.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('applies the file after the migrations, once; again only when a migration ran', async () => {
    fs.writeFileSync(path.join(migrations, '001_a.sql'), define(1));
    fs.writeFileSync(fnFile.path, define(2));
    expect(await run()).toEqual(['001_a.sql', 'x/sql/answer.sql']);
    expect(await answer()).toBe(2);
    expect(await run()).toEqual([]);
    // A historic migration replacing the function: the file's body is put back after it.
    fs.writeFileSync(path.join(migrations, '002_b.sql'), define(3));
    expect(await run()).toEqual(['002_b.sql', 'x/sql/answer.sql']);
    expect(await answer()).toBe(2);
  });

  it('applies a changed file once, never the older text again (an older process starting)', async () => {
    fs.writeFileSync(fnFile.path, define(4));
    expect(await run()).toEqual(['x/sql/answer.sql']);
    expect(await answer()).toBe(4);
    fs.writeFileSync(fnFile.path, define(2)); // the text of the release before
    expect(await run()).toEqual([]);
    expect(await answer()).toBe(4);
    fs.writeFileSync(fnFile.path, define(4));
    expect(await run()).toEqual([]);
  });

  it('leaves the files to the next start while a migration is left out (an older backup)', async () => {
    fs.writeFileSync(path.join(migrations, '003_c.sql'), define(5));
    fs.writeFileSync(path.join(migrations, '004_d.sql'), 'SELECT 1;');
    fs.writeFileSync(fnFile.path, define(6));
    const some = new Set(['001_a.sql', '002_b.sql', '003_c.sql']);
    expect(await migrate(db, migrations, some, [fnFile])).toEqual(['003_c.sql']);
    expect(await answer()).toBe(5);
    expect(await run()).toEqual(['004_d.sql', 'x/sql/answer.sql']);
    expect(await answer()).toBe(6);
    // A backup of this release's schema restored: its function files are applied with it.
    fs.writeFileSync(path.join(migrations, '005_e.sql'), define(7));
    const every = new Set(migrationFiles(migrations));
    expect(await migrate(db, migrations, every, [fnFile])).toEqual([
      '005_e.sql',
      'x/sql/answer.sql',
    ]);
    expect(await answer()).toBe(6);
  });

  it('stops at a file that fails, naming it, and applies nothing of it', async () => {
    fs.writeFileSync(fnFile.path, 'CREATE OR REPLACE FUNCTION rg_answer() RETURNS text;');
    await expect(run()).rejects.toThrow(/function file x\/sql\/answer.sql failed/);
    expect(await answer()).toBe(6);
  });
});

describe('a trigger file applied with the migration that needs it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-fn-bridge-'));
  const migrations = path.join(dir, 'migrations');
  const mark: FunctionFile = { name: 'x/sql/mark.sql', path: path.join(dir, 'mark.sql') };
  // A bridge as 030's: the previous release keeps inserting items; from the bridge on, every item
  // must be marked by the trigger the file carries.
  const markText = (tag: string) => `-- the bridge's trigger
-- applied with: 002_bridge.sql
CREATE OR REPLACE FUNCTION rg_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.mark := '${tag}'; RETURN NEW; END $$;
CREATE OR REPLACE TRIGGER rg_items_mark BEFORE INSERT ON rg_items
  FOR EACH ROW EXECUTE FUNCTION rg_mark();
`;
  let empty: Awaited<ReturnType<typeof emptyDatabase>>;
  let db: Db;
  const run = () => migrate(db, migrations, undefined, [mark]);

  beforeAll(async () => {
    fs.mkdirSync(migrations);
    fs.writeFileSync(
      path.join(migrations, '001_items.sql'),
      'CREATE TABLE rg_items (id serial PRIMARY KEY, mark text);',
    );
    fs.writeFileSync(mark.path, markText('v1'));
    fs.writeFileSync(
      path.join(migrations, '002_bridge.sql'),
      'CREATE TABLE rg_bridge_done (at timestamptz);',
    );
    empty = await emptyDatabase();
    db = createPool(empty.url, 4, { long: true });
    expect(await migrate(db, migrations, new Set(['001_items.sql']), [mark])).toEqual([
      '001_items.sql',
    ]);
  });
  afterAll(async () => {
    await db.end();
    await empty.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names its migration', () => {
    expect(appliedWith(mark)).toBe('002_bridge.sql');
  });

  it('commits with the migration: while the trigger waits, nothing of the migration is seen', async () => {
    // A writer of the previous release holds the items' table (SHARE, as a long COPY would): the
    // trigger's creation must wait for it, after the migration's own SQL has run.
    const writer = await db.connect();
    await writer.query('BEGIN');
    await writer.query('LOCK TABLE rg_items IN SHARE MODE');
    const migrating = run();
    try {
      await waitFor('the migrator to wait for the trigger', async () => {
        const { rows } = await db.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%rg_mark%'`,
        );
        return rows.length === 1;
      });
      // nothing of 002 is committed yet: no moment has the migration without the trigger
      const seen = await db.query(
        `SELECT (SELECT count(*) FROM schema_migrations WHERE name = '002_bridge.sql')::int AS n,
                to_regclass('rg_bridge_done') IS NOT NULL AS made`,
      );
      expect(seen.rows[0]).toEqual({ n: 0, made: false });
    } finally {
      await writer.query('COMMIT');
      writer.release();
    }
    // with the migration, then again after the migrations as every file (a later one may replace it)
    expect(await migrating).toEqual(['002_bridge.sql', 'x/sql/mark.sql', 'x/sql/mark.sql']);
    await db.query('INSERT INTO rg_items DEFAULT VALUES');
    const { rows } = await db.query('SELECT mark FROM rg_items');
    expect(rows).toEqual([{ mark: 'v1' }]);
    expect(await run()).toEqual([]); // recorded: not applied again
  });

  it('rolls back with the migration when it fails, naming the file', async () => {
    fs.writeFileSync(path.join(migrations, '003_more.sql'), 'CREATE TABLE rg_more (x int);');
    const broken: FunctionFile = { name: 'x/sql/broken.sql', path: path.join(dir, 'broken.sql') };
    fs.writeFileSync(broken.path, '-- applied with: 003_more.sql\nCREATE OR REPLACE TRIGGER;');
    await expect(migrate(db, migrations, undefined, [mark, broken])).rejects.toThrow(
      /function file x\/sql\/broken.sql failed/,
    );
    const left = await db.query(
      `SELECT (SELECT count(*) FROM schema_migrations WHERE name = '003_more.sql')::int AS n,
              to_regclass('rg_more') IS NOT NULL AS made`,
    );
    expect(left.rows[0]).toEqual({ n: 0, made: false });
    fs.rmSync(path.join(migrations, '003_more.sql'));
  });

  it('changes function and trigger together later, as any file', async () => {
    fs.writeFileSync(mark.path, markText('v2'));
    expect(await run()).toEqual(['x/sql/mark.sql']);
    await db.query('INSERT INTO rg_items DEFAULT VALUES');
    const { rows } = await db.query('SELECT mark FROM rg_items ORDER BY id');
    expect(rows.map((r) => r.mark)).toEqual(['v1', 'v2']);
  });
});

describe('numbered migrations', () => {
  // Those that ran before function bodies became files keep their historic copies.
  const HISTORIC = new Set([
    '005_generation_changed.sql',
    '006_create_generation.sql',
    '009_webhooks.sql',
    '011_studio.sql',
    '013_abuse_limits_studio.sql',
    '014_test_keys_topups.sql',
    '018_trace_parent.sql',
    '019_test_renders_final.sql',
    // shipped with its bridge triggers' first copies before a file could carry a trigger; the
    // files applied with it (db/sql/*: `-- applied with: 030_teams.sql`) replace them
    '030_teams.sql',
  ]);

  it('define no function any more: a body lives in src/<folder>/sql/<name>.sql', () => {
    const defining = migrationFiles()
      .filter((m) => !HISTORIC.has(m))
      .filter((m) =>
        /\bCREATE\s+(OR\s+REPLACE\s+)?FUNCTION\b/i.test(
          fs.readFileSync(path.join(MIGRATIONS, m), 'utf8').replace(/--[^\n]*/g, ''),
        ),
      );
    expect(defining).toEqual([]);
  });
});
