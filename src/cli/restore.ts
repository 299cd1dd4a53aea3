// `rendergate restore FILE [--data-dir DIR]`: rebuilds a stopped, empty installation from a backup.
// The schema is rebuilt by applying the migrations the backup had applied (refused when the backup
// comes from a newer release), the rows are loaded in one transaction, the stored files put back
// through the configured storage. The next start applies any newer migrations, as after an upgrade.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../db/embedded.ts';
import { loadDatabase, publicTables } from '../db/load.ts';
import { migrate, migrationFiles } from '../db/migrate.ts';
import { createPool } from '../db/pool.ts';
import { VERSION } from '../domain/version.ts';
import { createStorage } from '../storage/index.ts';
import { CliError } from './cli-error.ts';
import { readArchive, storedFiles } from './archive.ts';

export async function restore(args: string[], flags: Map<string, string>): Promise<void> {
  const file = args[0];
  if (!file) throw new CliError('usage: rendergate restore FILE [--data-dir DIR]');
  const dataDirFlag = flags.get('data-dir');
  const config = loadConfig(
    dataDirFlag ? { ...process.env, RENDERGATE_DATA_DIR: dataDirFlag } : process.env,
  );
  const dataDir = config.dataDir;
  // Refused before anything is written: restoring over live data would merge two histories of money.
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
    throw new CliError(
      `${dataDir} is not empty; restore rebuilds a new installation: stop the service and give it an empty or missing data dir (RENDERGATE_DATA_DIR or --data-dir)`,
    );
  }
  if (config.databaseUrl) {
    const tables = await publicTables(config.databaseUrl);
    if (tables.length > 0)
      throw new CliError(
        `the database at DATABASE_URL is not empty (tables: ${tables.slice(0, 5).join(', ')}${tables.length > 5 ? ', …' : ''}); restore needs an empty one`,
      );
  }
  const createdDataDir = !fs.existsSync(dataDir);
  await fsp.mkdir(dataDir, { recursive: true, mode: 0o755 });
  const staging = await fsp.mkdtemp(path.join(path.dirname(dataDir), '.rendergate-restore-'));
  let embedded: EmbeddedPostgres | null = null;
  let done = false;
  try {
    const manifest = await readArchive(path.resolve(file), staging);
    const known = new Set(migrationFiles());
    const unknown = manifest.database.migrations.filter((m) => !known.has(m));
    if (unknown.length > 0) {
      throw new CliError(
        `the backup was made by release ${manifest.version}, with migrations this release (${VERSION}) does not have: ${unknown.join(', ')}; restore it with release ${manifest.version} or later`,
      );
    }
    embedded = config.databaseUrl ? null : await startEmbeddedPostgres(dataDir);
    const url = config.databaseUrl ?? embedded!.url;
    const db = createPool(url, 2, { long: true });
    try {
      await migrate(db, undefined, new Set(manifest.database.migrations));
    } finally {
      await db.end();
    }
    await loadDatabase(url, path.join(staging, 'db'), manifest.database);
    const storage = createStorage(config.storage);
    const filesDir = path.join(staging, 'files');
    const rels = await storedFiles(filesDir);
    for (const rel of rels)
      await storage.put(
        rel.split(path.sep).join('/'),
        path.join(filesDir, rel),
        'application/octet-stream',
      );
    done = true;
    const rows = Object.fromEntries(manifest.database.tables.map((t) => [t.name, t.rows]));
    const note =
      manifest.storage.driver === 's3'
        ? 'the stored files stay in the S3 bucket the backup was taken from (use its object versioning to go back in time)'
        : undefined;
    process.stdout.write(
      JSON.stringify(
        {
          restored: path.resolve(file),
          dataDir,
          from: manifest.version,
          takenAt: manifest.createdAt,
          rows,
          files: rels.length,
          note,
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    await embedded?.stop();
    await fsp.rm(staging, { recursive: true, force: true });
    // A failed restore leaves the data dir as it found it, so it can simply be run again.
    if (!done) {
      if (createdDataDir) await fsp.rm(dataDir, { recursive: true, force: true });
      else
        for (const e of await fsp.readdir(dataDir))
          await fsp.rm(path.join(dataDir, e), { recursive: true, force: true });
    }
  }
}
