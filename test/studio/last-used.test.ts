// A key's "last used" in the studio: the newest request window while it is kept, and the janitor folds
// each window it prunes into api_keys.last_used_at, so the answer survives the pruning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { createStorage } from '../../src/storage/index.ts';
import { createAccount } from '../../src/services/accounts.ts';
import { createKey } from '../../src/services/keys.ts';
import { listKeys } from '../../src/services/keys.ts';
import { janitor } from '../helpers/janitor.ts';
import { OPERATOR } from '../../src/domain/principal.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  dbh = await freshDatabase();
});
afterAll(async () => {
  await dbh?.drop();
});

describe('last use of a key', () => {
  it('comes from the newest request window, and stays once the janitor has pruned the windows', async () => {
    const a = await createAccount(dbh.db, 'last-used@example.test', null);
    const k = await createKey(dbh.db, 'rg_', 600, a.id, { name: 'k' }, { by: OPERATOR });
    expect((await listKeys(dbh.db, a.id, 'UTC'))[0].lastUsedAt).toBeNull();
    const minute = Math.floor(Date.now() / 60_000);
    const old = minute - 90;
    await dbh.db.query(
      'INSERT INTO rate_windows (key_id, window_start, used, granted) VALUES ($1, $2, 3, 1), ($1, $3, 1, 1)',
      [k.id, old - 5, old],
    );
    expect((await listKeys(dbh.db, a.id, 'UTC'))[0].lastUsedAt!.getTime()).toBe(old * 60_000);
    await janitor(
      dbh.db,
      createStorage({ driver: 'file', root: '/tmp/rg-janitor-unused' }),
    ).sweep();
    const { rows } = await dbh.db.query(
      'SELECT count(*)::int AS n FROM rate_windows WHERE key_id = $1',
      [k.id],
    );
    expect(rows[0].n).toBe(0);
    expect((await listKeys(dbh.db, a.id, 'UTC'))[0].lastUsedAt!.getTime()).toBe(old * 60_000);
  });
});
