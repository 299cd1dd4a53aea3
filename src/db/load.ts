// Loads a database dump (db/dump.ts) into a database whose schema the same migrations just built:
// the rows its migrations seeded cleared, every table COPYed in its load order, sequences set, all
// in one transaction, so a failed restore leaves nothing half-loaded.
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { quoteIdent, type DatabaseDump } from './dump.ts';

export async function loadDatabase(url: string, dir: string, dump: DatabaseDump): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL statement_timeout = 0');
    const names = dump.tables.map((t) => `public.${quoteIdent(t.name)}`);
    // Rows the migrations seeded (server_settings' facts) give way to the backup's own.
    if (names.length > 0) await client.query(`TRUNCATE ${names.join(', ')}`);
    // The backup's rows are loaded as they were: no trigger of ours runs on them (a new account's
    // trigger would add its owner, whom the backup already holds). Back on before the commit.
    for (const n of names) await client.query(`ALTER TABLE ${n} DISABLE TRIGGER USER`);
    for (const t of dump.tables) {
      const columns = t.columns.map(quoteIdent).join(', ');
      const copy = client.query(
        copyFrom(`COPY public.${quoteIdent(t.name)} (${columns}) FROM STDIN`),
      );
      await pipeline(fs.createReadStream(path.join(dir, t.file)), copy);
      if (copy.rowCount !== t.rows)
        throw new Error(`table ${t.name}: loaded ${copy.rowCount} rows, the backup has ${t.rows}`);
    }
    for (const n of names) await client.query(`ALTER TABLE ${n} ENABLE TRIGGER USER`);
    for (const s of dump.sequences) {
      if (s.value !== null)
        await client.query('SELECT setval($1, $2, true)', [
          `public.${quoteIdent(s.name)}`,
          s.value,
        ]);
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Tables of the public schema: a restore goes only into a database that has none. */
export async function publicTables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ relname: string }>(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S') ORDER BY 1`,
    );
    return rows.map((r) => r.relname);
  } finally {
    await client.end().catch(() => undefined);
  }
}
