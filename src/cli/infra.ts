// The infrastructure every command needs, the server's start (app.ts) and the operator's local commands
// alike: the database (embedded or external, checked and migrated), the catalog and the storage.
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../db/embedded.ts';
import { createPool, type Db } from '../db/pool.ts';
import { migrate } from '../db/migrate.ts';
import { checkDatabaseServer, DatabaseRefused } from '../db/server-check.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import { loadCatalog } from '../backends/catalog.ts';
import { createStorage } from '../storage/index.ts';
import type { Storage } from '../storage/storage.ts';

export interface Infra {
  log: Logger;
  db: Db;
  url: string;
  catalog: Catalog;
  storage: Storage;
  close: () => Promise<void>;
}

/** Database (embedded or external, migrated), catalog and storage: what every command needs. */
export async function openInfra(config: Config, log: Logger): Promise<Infra> {
  const catalog = loadCatalog(config.catalogPath ?? undefined);
  let embedded: EmbeddedPostgres | null = null;
  if (!config.databaseUrl)
    embedded = await startEmbeddedPostgres(config.dataDir, (m) => log.info(m));
  if (config.databaseUrl) {
    try {
      await checkDatabaseServer(config.databaseUrl);
    } catch (e) {
      if (e instanceof DatabaseRefused) throw new ConfigError([e.message]);
      throw e;
    }
  }
  const url = config.databaseUrl ?? embedded!.url;
  // Migrations on a pool of their own, without the request pools' short statement limits.
  const migrations = createPool(url, 2, { long: true });
  try {
    await migrate(migrations);
  } catch (e) {
    await embedded?.stop();
    throw e;
  } finally {
    await migrations.end();
  }
  const db = createPool(url);
  const storage = createStorage(config.storage);
  return {
    log,
    db,
    url,
    catalog,
    storage,
    close: async () => {
      await db.end().catch(() => undefined);
      await embedded?.stop();
    },
  };
}
