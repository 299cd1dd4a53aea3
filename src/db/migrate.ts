// Numbered, forward-only SQL migrations, applied at start under an advisory lock so that processes
// starting at the same moment apply each one exactly once. They change the schema; the current body
// of each SQL function is a file of its own (sql-functions.ts), applied after them under the same
// lock, and a file that names a migration (`-- applied with:`) also inside that migration's
// transaction.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './pool.ts';
import {
  appliedWith,
  applyFunctionFiles,
  applyFunctionText,
  ensureFunctionRecord,
  functionFiles,
  type FunctionFile,
} from './sql-functions.ts';

const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../migrations',
);
const LOCK_ID = 0x52474d47; // "RGMG"
const DEADLOCK_TRIES = 5;

/** The SQLSTATE of an error or of the error it wraps. */
const causeCode = (e: unknown): string | undefined =>
  (e as { code?: string }).code ?? (e as { cause?: { code?: string } }).cause?.code;

/** The migrations this release has, in the order they apply. */
export function migrationFiles(dir = MIGRATIONS_DIR): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();
}

/**
 * Applies the pending migrations, then the function files that need it; returns the names applied.
 * `only`: apply just these (a restore rebuilds the schema its backup had, no further). The function
 * files are applied once every migration of this release is: they are written against its schema,
 * so a restore of an older release's backup leaves them to the next start, which migrates the rest.
 */
export async function migrate(
  db: Db,
  dir = MIGRATIONS_DIR,
  only?: ReadonlySet<string>,
  functions: FunctionFile[] = functionFiles(),
): Promise<string[]> {
  const all = migrationFiles(dir);
  const files = all.filter((f) => !only || only.has(f));
  const client = await db.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map(
        (r) => r.name,
      ),
    );
    await ensureFunctionRecord(client);
    const companions = (file: string) => functions.filter((f) => appliedWith(f) === file);
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      const withIt = companions(file);
      for (let attempt = 1; ; attempt++) {
        await client.query('BEGIN');
        try {
          await client.query(sql).catch((e: Error) => {
            throw new Error(`migration ${file} failed: ${e.message}`, { cause: e });
          });
          // the functions (and triggers) it needs commit with it: no moment has one without the other
          for (const f of withIt) await applyFunctionText(client, f);
          await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
          await client.query('COMMIT');
          break;
        } catch (e) {
          await client.query('ROLLBACK');
          // A migration locking two tables can meet a running transaction that holds them the other
          // way round; PostgreSQL breaks the deadlock by failing one. Nothing of it committed: again.
          if (attempt < DEADLOCK_TRIES && causeCode(e) === '40P01') continue;
          throw e;
        }
      }
      applied.push(file, ...withIt.map((f) => f.name));
    }
    const complete = all.every((f) => done.has(f) || applied.includes(f));
    if (complete)
      applied.push(...(await applyFunctionFiles(client, functions, applied.length > 0)));
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_ID]).catch(() => undefined);
    client.release();
  }
  return applied;
}

/** Names of migrations on disk that the database has not applied (for readiness checks). */
export async function pendingMigrations(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = fs.readdirSync(dir).filter((f) => /^\d+_.+\.sql$/.test(f));
  const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations');
  const done = new Set(rows.map((r) => r.name));
  return files.filter((f) => !done.has(f));
}
