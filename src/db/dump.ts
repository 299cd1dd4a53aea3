// A consistent logical copy of the database while the service runs: one REPEATABLE READ, READ ONLY
// transaction (one snapshot, as pg_dump takes it) COPYs every table of the public schema to a file.
// The schema itself is not copied: a restore rebuilds it by applying the very migrations the snapshot
// had applied (listed in the manifest), then loads the rows. The migrator's bookkeeping is not
// copied: the next start applies the SQL function files (db/sql-functions.ts) to the restored schema.
//
// Why not pg_dump: the embedded server is PostgreSQL 18 and no pg_dump 18 can be installed from the
// registries this project uses (the Postgres npm packages ship only initdb, pg_ctl and postgres; Debian
// bookworm has postgresql-client-15, and an older pg_dump refuses a newer server).
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { releaseBackupLock, takeBackupLock } from './backup-lock.ts';

export interface TableDump {
  name: string;
  columns: string[];
  rows: number;
  file: string;
}
export interface DatabaseDump {
  serverVersion: string;
  migrations: string[];
  /** In an order that loads without breaking a foreign key: every table after those it references. */
  tables: TableDump[];
  sequences: { name: string; value: number | null }[];
}

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Copies every table into `dir` in one snapshot. `whileConsistent` runs after the snapshot is taken
 * and before the backup lock is released (db/backup-lock.ts): the stored files are copied there.
 */
export async function dumpDatabase(
  url: string,
  dir: string,
  whileConsistent: () => Promise<void>,
): Promise<DatabaseDump> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Before the snapshot: wait for any removal of stored files under way, and hold new ones off.
    await takeBackupLock(client);
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // A large table may take longer than any statement limit of the role or the server.
    await client.query(
      'SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0',
    );
    const serverVersion = (await client.query<{ server_version: string }>('SHOW server_version'))
      .rows[0].server_version;
    const migrations = (
      await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')
    ).rows.map((r) => r.name);
    const tables = await tablesInLoadOrder(client);
    const dumped: TableDump[] = [];
    for (const t of tables) {
      const file = `${t.name}.copy`;
      const columns = t.columns.map(quoteIdent).join(', ');
      const copy = client.query(copyTo(`COPY public.${quoteIdent(t.name)} (${columns}) TO STDOUT`));
      await pipeline(copy, fs.createWriteStream(path.join(dir, file)));
      dumped.push({ name: t.name, columns: t.columns, rows: copy.rowCount, file });
    }
    const sequences = (
      await client.query<{ name: string; value: number | null }>(
        `SELECT sequencename AS name, last_value AS value FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`,
      )
    ).rows;
    await whileConsistent();
    await client.query('COMMIT');
    await releaseBackupLock(client);
    return { serverVersion, migrations, tables: dumped, sequences };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function tablesInLoadOrder(
  client: pg.Client,
): Promise<{ name: string; columns: string[] }[]> {
  const { rows } = await client.query<{ name: string; columns: string[]; refs: string[] }>(
    `SELECT c.relname AS name,
            array_agg(a.attname::text ORDER BY a.attnum) AS columns,
            coalesce((SELECT array_agg(DISTINCT r.relname::text) FROM pg_constraint f JOIN pg_class r ON r.oid = f.confrelid
                      WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid), '{}') AS refs
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
     WHERE c.relkind = 'r' AND c.relname NOT IN ('schema_migrations', 'schema_functions')
     GROUP BY c.oid, c.relname ORDER BY c.relname`,
  );
  const byName = new Map(rows.map((r) => [r.name, r]));
  const ordered: { name: string; columns: string[] }[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string) => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting')
      throw new Error(
        `tables reference each other in a cycle through ${name}; a row-by-row load order cannot exist`,
      );
    state.set(name, 'visiting');
    const t = byName.get(name)!;
    for (const r of t.refs) if (byName.has(r)) visit(r);
    state.set(name, 'done');
    ordered.push({ name: t.name, columns: t.columns });
  };
  for (const name of byName.keys()) visit(name);
  return ordered;
}
