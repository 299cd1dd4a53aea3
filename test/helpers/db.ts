// A fresh, migrated database on the test run's PostgreSQL, for one test file.
import crypto from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPool, type Db } from '../../src/db/pool.ts';
import { migrate } from '../../src/db/migrate.ts';

export async function freshDatabase(): Promise<{ db: Db; url: string; drop: () => Promise<void> }> {
  const base = inject('pgUrl');
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(base);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = base.replace(/\/postgres$/, `/${name}`);
  const db = createPool(url, 20, { long: true }); // the test's own queries and migrations, never a request's
  await migrate(db);
  return {
    db,
    url,
    drop: async () => {
      await db.end();
      const c = new pg.Client(base);
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
