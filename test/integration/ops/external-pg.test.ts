// An external PostgreSQL as operators run it: behind PgBouncer (the Debian package) in session mode the
// service starts, renders and polls; in transaction mode, which breaks LISTEN/NOTIFY and session
// advisory locks, it refuses to start and says what to set; a server older than supported is refused.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService } from '../../helpers/service.ts';
import { PGBOUNCER, startPgBouncer } from '../../helpers/pgbouncer.ts';
import { checkDatabaseServer, DatabaseRefused } from '../../../src/db/server-check.ts';
import { DB_WAIT } from '../../../src/db/pool.ts';

describe('the database server check', () => {
  it("accepts the test run's server and refuses one older than the oldest supported", async () => {
    const dbh = await freshDatabase();
    try {
      const { version } = await checkDatabaseServer(dbh.url);
      expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(15);
      const old = await checkDatabaseServer(dbh.url, { minVersion: 990000 }).catch((e: Error) => e);
      expect(old).toBeInstanceOf(DatabaseRefused);
      expect((old as Error).message).toMatch(
        /^DATABASE_URL: PostgreSQL \S+ is older than this release supports \(PostgreSQL 15/,
      );
    } finally {
      await dbh.drop();
    }
  });
});

describe.skipIf(!PGBOUNCER)('through PgBouncer', () => {
  it('session mode: starts, renders and polls; statement_timeout reaches the session', async () => {
    const dbh = await freshDatabase();
    const bouncer = await startPgBouncer(dbh.url, 'session');
    try {
      const svc = await startTestService(bouncer.url, {
        env: { RENDERGATE_WORKER_CONCURRENCY: '1' },
      });
      try {
        const api = client(svc.base);
        const a = await api.account(10_000);
        const made = await api.call('POST', '/v1/generations', {
          key: a.key,
          body: {
            modelId: 'rendergate/shot-list',
            inputs: { text: 'Through the pooler. Two sentences.' },
          },
          headers: { 'idempotency-key': crypto.randomUUID() },
        });
        expect(made.status).toBe(202);
        expect((await api.waitFinal(a.key, made.json.id)).status).toBe('succeeded');
        // statement_timeout reached the session (it is set after connect, not as a startup parameter)
        const { rows } = await svc.running.infra.db.query('SHOW statement_timeout');
        expect(rows[0].statement_timeout).toBe(`${DB_WAIT.queryMs}ms`);
      } finally {
        await svc.stop();
      }
    } finally {
      await bouncer.stop();
      await dbh.drop();
    }
  });

  it('transaction mode: the start is refused with what to set instead', async () => {
    const dbh = await freshDatabase();
    const bouncer = await startPgBouncer(dbh.url, 'transaction');
    try {
      const err = await startTestService(bouncer.url).then(
        async (s) => {
          await s.stop();
          return null;
        },
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/pooler in transaction or statement mode/);
      expect(err?.message).toMatch(/pool_mode=session/);
    } finally {
      await bouncer.stop();
      await dbh.drop();
    }
  });
});
