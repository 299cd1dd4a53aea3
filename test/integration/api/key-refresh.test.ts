// A key in steady use is looked up again in the background past half its cache lifetime, so its
// requests never wait for the lookup, while a revocation made elsewhere (another process: nothing
// tells this one) still reaches it within the lifetime.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Accounts } from '../../../src/services/accounts.ts';
import { ApiKeys } from '../../../src/services/keys.ts';
import { KeyResolver } from '../../../src/services/key-resolver.ts';
import { OPERATOR } from '../../../src/domain/principal.ts';
import type { Db } from '../../../src/db/pool.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { waitFor } from '../../helpers/wait.ts';
import { counting } from '../../helpers/counting-db.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
const TTL = 400;

beforeAll(async () => {
  dbh = await freshDatabase();
});
afterAll(async () => {
  await dbh?.drop();
});

/** The pool, counting the key lookups sent through it. */
function countingLookups(target: Db): { db: Db; lookups: () => number } {
  const { db, names } = counting(target);
  return { db, lookups: () => names.filter((n) => n === 'key-lookup').length };
}

it('refreshes a key in use in the background, and still refuses a revoked one within the lifetime', async () => {
  const a = await new Accounts(dbh.db).create(OPERATOR, 'refresh@t.test', null);
  const made = await new ApiKeys(dbh.db, 'rg_', 600).create(OPERATOR, a.id, { name: 'k' });
  const header = `Bearer ${made.key}`;
  const { db, lookups } = countingLookups(dbh.db);
  const resolver = new KeyResolver(db, 'rg_', TTL);
  await resolver.authenticate(header);
  expect(lookups()).toBe(1);
  // Past half the lifetime: answered from memory at once, and looked up again meanwhile.
  await new Promise((r) => setTimeout(r, TTL * 0.6));
  expect(resolver.cached(header)?.id).toBe(made.id);
  expect(lookups()).toBe(2);
  // The fresh answer replaces the old one once it has answered: the key stays cached past the
  // first answer's lifetime, without a request waiting.
  await new Promise((r) => setTimeout(r, TTL * 0.6));
  expect(resolver.cached(header)?.id).toBe(made.id);
  // Revoked by another process: no answer older than the lifetime is served, so it is refused
  // within it.
  const revokedAt = Date.now();
  await dbh.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [made.id]);
  await waitFor('the revoked key refused', async () => {
    if (resolver.cached(header)) return false;
    await expect(resolver.authenticate(header)).rejects.toMatchObject({ code: 'API_KEY_REVOKED' });
    return true;
  });
  expect(Date.now() - revokedAt).toBeLessThan(TTL + 500);
});
