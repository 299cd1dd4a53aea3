// What the operational endpoints (/readyz, /metrics) read from the database.
import type { Db } from '../db/pool.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { queueCounts } from '../db/generations.ts';

export class OpsProbe {
  constructor(private db: Db) {}

  /** Migrations not yet applied (throws while the database is unreachable). */
  pendingMigrations(): Promise<string[]> {
    return pendingMigrations(this.db);
  }

  /** Renders waiting for a worker and running now. */
  queueCounts(): Promise<{ waiting: number; running: number }> {
    return queueCounts(this.db);
  }
}
