// `rendergate backup --out FILE`: a consistent copy of the database and, with file storage, of the
// stored files, in one archive, taken while the service runs. Works on the embedded database (as a
// guest of the running service, or starting it when the service is stopped) and on DATABASE_URL.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import { startEmbeddedPostgres } from '../db/embedded.ts';
import { dumpDatabase } from '../db/dump.ts';
import { VERSION } from '../domain/version.ts';
import { CliError } from './cli-error.ts';
import { FORMAT, storedFiles, writeArchive, type Manifest } from './archive.ts';

export async function backup(_args: string[], flags: Map<string, string>): Promise<void> {
  const config = loadConfig();
  const outFlag = flags.get('out');
  if (!outFlag || outFlag === 'true') throw new CliError('usage: rendergate backup --out FILE');
  const out = path.resolve(outFlag);
  if (fs.existsSync(out))
    throw new CliError(`${out} already exists; a backup never overwrites a file`);
  if (!config.databaseUrl && !fs.existsSync(path.join(config.dataDir, 'postgres', 'PG_VERSION'))) {
    throw new CliError(
      `no database under ${config.dataDir} (set RENDERGATE_DATA_DIR, or DATABASE_URL for an external one)`,
    );
  }
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(config.dataDir);
  const staging = await fsp.mkdtemp(path.join(path.dirname(out), '.rendergate-backup-'));
  try {
    await fsp.mkdir(path.join(staging, 'db'));
    await fsp.mkdir(path.join(staging, 'files'));
    let files = 0;
    const database = await dumpDatabase(
      config.databaseUrl ?? embedded!.url,
      path.join(staging, 'db'),
      async () => {
        // Inside the snapshot's lock: every file a row of the snapshot names is still there. Files written
        // since (renders finishing now) come along too; no row names them, they are harmless.
        if (config.storage.driver === 'file')
          files = await linkFiles(config.storage.root, path.join(staging, 'files'));
      },
    );
    const manifest: Manifest = {
      format: FORMAT,
      version: VERSION,
      createdAt: new Date().toISOString(),
      database,
      storage: { driver: config.storage.driver, files },
    };
    await fsp.writeFile(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
    await writeArchive(staging, out);
    const rows = Object.fromEntries(database.tables.map((t) => [t.name, t.rows]));
    process.stdout.write(
      JSON.stringify(
        {
          file: out,
          version: VERSION,
          migrations: database.migrations.length,
          rows,
          files,
          storage: config.storage.driver,
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
    await embedded?.stop();
  }
}

/** Hard links where the archive's scratch space shares the disk (no copy, and a file replaced meanwhile keeps its old content), copies elsewhere. */
async function linkFiles(root: string, dest: string): Promise<number> {
  const rels = await storedFiles(root);
  for (const rel of rels) {
    const target = path.join(dest, rel);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    try {
      await fsp.link(path.join(root, rel), target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Gone meanwhile: a worker whose render was cancelled while it stored the output removes the file, which no row names.
      if (code === 'ENOENT') continue;
      if (code !== 'EXDEV' && code !== 'EPERM') throw e;
      await fsp.copyFile(path.join(root, rel), target);
    }
  }
  return (await storedFiles(dest)).length;
}
