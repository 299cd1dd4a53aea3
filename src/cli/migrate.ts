// `rendergate migrate`: applies pending migrations and exits, for upgrades that migrate as a step of
// their own before the new release's processes start (every process also applies them at start, under
// the same advisory lock, so running both is harmless). docs/upgrades.md has the rule each migration
// follows so that the previous release keeps working meanwhile.
import pino from 'pino';
import { loadConfig } from '../config.ts';
import { startEmbeddedPostgres } from '../db/embedded.ts';
import { migrate, migrationFiles } from '../db/migrate.ts';
import { createPool } from '../db/pool.ts';
import { VERSION } from '../domain/version.ts';

export async function migrateCommand(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: 'warn' }, pino.destination(2));
  const embedded = config.databaseUrl
    ? null
    : await startEmbeddedPostgres(config.dataDir, (m) => log.info(m));
  const db = createPool(config.databaseUrl ?? embedded!.url, 2, { long: true });
  try {
    const applied = await migrate(db);
    process.stdout.write(
      JSON.stringify({ version: VERSION, applied, migrations: migrationFiles().length }, null, 2) +
        '\n',
    );
  } finally {
    await db.end();
    await embedded?.stop();
  }
}
