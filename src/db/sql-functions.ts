// SQL functions kept as one file each: `src/<folder>/sql/<name>.sql` holds the current body of one
// function (`CREATE OR REPLACE FUNCTION …`), beside the TypeScript that calls it, instead of a copy
// in every numbered migration that changed it (graphile-worker keeps one file per SQL operation
// too). The migrator applies them after the numbered migrations, under the same advisory lock, each
// in a transaction of its own, and records the SHA-256 of each text it applied in
// `schema_functions`:
//   - a text not applied before is applied (a new file, or a file changed by this release);
//   - the text applied last is applied again only when numbered migrations ran in the same call (a
//     historic migration may have replaced the function with its own copy: a fresh database, an
//     upgrade from a release before these files, a restore: a backup leaves this table out);
//   - a text applied before but replaced since is never applied again: that process is of an older
//     release than the database's functions (a rolling upgrade, docs/upgrades.md), and the newer
//     body stays, as the newer schema does. Going back to an earlier text means changing it again.
// A file's function keeps the signature and the result the previous release calls it with (or is a
// new name): CREATE OR REPLACE cannot change a result type, and the previous release calls it
// meanwhile.
//
// A trigger's function is such a file too, carrying its `CREATE OR REPLACE TRIGGER` statements, so
// function and trigger always change together, in one transaction. A migration that needs the
// function at once (a rolling upgrade's bridge: the previous release's writes must meet the trigger
// from the moment the migration commits) is named by the file's line `-- applied with: NNN_x.sql`:
// the migrator applies the file inside that migration's own transaction, right after its SQL, and
// records its hash there, so no commit ever has the migration without the trigger. Later the file is
// applied as any other (its text is new, or migrations ran since). Its text must hold against that
// migration's schema: PL/pgSQL resolves names only when the function runs, a SQL function at once.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Tx } from './pool.ts';

/** src/ (or dist/ when built: the build copies the .sql files beside the JavaScript). */
const SRC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface FunctionFile {
  /** `<folder>/sql/<file>`, relative to src/: what schema_functions records. */
  name: string;
  path: string;
}

/** Every function file of the source tree, in name order. */
export function functionFiles(root = SRC_DIR): FunctionFile[] {
  const files: FunctionFile[] = [];
  for (const folder of fs.readdirSync(root, { withFileTypes: true })) {
    const dir = path.join(root, folder.name, 'sql');
    if (!folder.isDirectory() || !fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.sql')))
      files.push({ name: `${folder.name}/sql/${f}`, path: path.join(dir, f) });
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : 1));
}

export const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** The migration a file is applied with (its `-- applied with: NNN_x.sql` line), or null. */
export function appliedWith(f: FunctionFile): string | null {
  const m = /^--\s*applied with:\s*(\d+_\S+\.sql)\s*$/m.exec(fs.readFileSync(f.path, 'utf8'));
  return m ? m[1] : null;
}

/** The migrator's record of the texts applied; made before any migration, which may apply files. */
export async function ensureFunctionRecord(client: Tx): Promise<void> {
  // Bookkeeping of the migrator, as schema_migrations is: not part of a backup (db/dump.ts).
  await client.query(`CREATE TABLE IF NOT EXISTS schema_functions (
    name text NOT NULL, sha256 text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (name, sha256))`);
}

/**
 * Runs file `f` and records its text's hash, inside the caller's transaction (its own, or that of
 * the migration it is applied with).
 */
export async function applyFunctionText(client: Tx, f: FunctionFile): Promise<void> {
  const text = fs.readFileSync(f.path, 'utf8');
  try {
    await client.query(text);
  } catch (e) {
    throw new Error(`function file ${f.name} failed: ${(e as Error).message}`, { cause: e });
  }
  await client.query(
    `INSERT INTO schema_functions (name, sha256) VALUES ($1, $2)
     ON CONFLICT (name, sha256) DO UPDATE SET applied_at = clock_timestamp()`,
    [f.name, sha256(text)],
  );
}

/**
 * Applies the function files that need it (the rules above) on `client`, which holds the migration
 * lock; `schemaChanged`: numbered migrations ran in this call. Returns the names applied.
 */
export async function applyFunctionFiles(
  client: Tx,
  files: FunctionFile[],
  schemaChanged: boolean,
): Promise<string[]> {
  await ensureFunctionRecord(client);
  const { rows } = await client.query<{ name: string; sha256: string }>(
    'SELECT name, sha256 FROM schema_functions ORDER BY applied_at',
  );
  const latest = new Map(rows.map((r) => [r.name, r.sha256]));
  const seen = new Set(rows.map((r) => `${r.name} ${r.sha256}`));
  const applied: string[] = [];
  for (const f of files) {
    const hash = sha256(fs.readFileSync(f.path, 'utf8'));
    const current = latest.get(f.name) === hash;
    if (current ? !schemaChanged : seen.has(`${f.name} ${hash}`)) continue;
    await client.query('BEGIN');
    try {
      await applyFunctionText(client, f);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    }
    applied.push(f.name);
  }
  return applied;
}
