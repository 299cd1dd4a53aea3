// The Usage page's first page reads the account's statement in one statement
// (src/ledger/statement.ts through services/usage.ts statement): the same ledger page, receipts,
// budgets panel and spend stamp as their own reads answer, in one round trip; an account that is
// not there is a 404, and the permissions are those of the reads it replaces.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Accounts } from '../../../src/services/accounts.ts';
import { Budgets } from '../../../src/services/budgets.ts';
import { ApiKeys } from '../../../src/services/keys.ts';
import { KeyResolver } from '../../../src/services/key-resolver.ts';
import { Receipts } from '../../../src/services/receipts.ts';
import { Usage } from '../../../src/services/usage.ts';
import { ApiError } from '../../../src/domain/errors.ts';
import { newId } from '../../../src/domain/ids.ts';
import { memberPrincipal, OPERATOR } from '../../../src/domain/principal.ts';
import { billingConfig } from '../../../src/config/billing.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { counting } from '../../helpers/counting-db.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
const ZONE = 'Europe/Paris';
const BILLING = billingConfig({}, []);

/** The person who owns account `id` (its first member). */
async function ownerOf(id: string): Promise<string> {
  const { rows } = await dbh.db.query('SELECT person_id FROM memberships WHERE account_id = $1', [
    id,
  ]);
  return rows[0].person_id as string;
}

beforeAll(async () => {
  dbh = await freshDatabase();
});
afterAll(() => dbh.drop());

it('answers what the ledger, receipts, budgets panel and stamp answer, in one statement', async () => {
  const accounts = new Accounts(dbh.db);
  const keys = new ApiKeys(dbh.db, 'rg_', 60, new KeyResolver(dbh.db, 'rg_'));
  const budgets = new Budgets(dbh.db, ZONE);
  const a = await accounts.create(OPERATOR, `statement-${Date.now()}@example.com`, 'S');
  const owner = memberPrincipal(a.id, await ownerOf(a.id), 'owner');
  // three credits (each with its receipt), two keys, an account and a key budget
  for (const cents of [500, 700, 900]) await accounts.credit(OPERATOR, a.id, cents, 'top-up');
  const k1 = await keys.create(OPERATOR, a.id, { name: 'ci' });
  await keys.create(OPERATOR, a.id, { name: 'batch' });
  await budgets.set(owner, { scope: 'account' }, 'month', 10_000);
  await budgets.set(owner, { scope: 'key', keyId: k1.id }, 'day', 300);
  await budgets.setLowBalance(owner, 200);

  const counted = counting(dbh.db);
  const usage = new Usage(counted.db, ZONE);
  const s = await usage.statement(owner, 2);
  expect(counted.names).toEqual(['account-statement-3']);

  const apart = new Usage(dbh.db, ZONE);
  expect(s.stamp).toBe(await apart.stamp(owner));
  expect(s.ledger).toEqual(await accounts.ledger(owner, 2, null));
  expect(s.ledger.data).toHaveLength(2);
  expect(s.ledger.nextCursor).not.toBeNull();
  expect(s.receipts).toEqual(await new Receipts(dbh.db, BILLING).list(owner));
  expect(s.receipts.map((r) => r.amountCents)).toEqual([900, 700, 500]);
  expect(s.budgets).toEqual(await budgets.panel(owner));
  expect(s.budgets.budgets.map((b) => [b.scope, b.period, b.limitCents])).toEqual([
    ['account', 'month', 10_000],
    ['key', 'day', 300],
  ]);
  expect(s.budgets.keys).toHaveLength(2);
  expect(s.budgets.lowBalanceCents).toBe(200);

  // the whole ledger on one page: no cursor
  expect((await usage.statement(owner, 25)).ledger).toEqual(await accounts.ledger(owner, 25, null));
  expect((await usage.statement(owner, 25)).ledger.nextCursor).toBeNull();

  // an account that is not there, and a principal of no account
  const gone = memberPrincipal(newId('acct'), newId('usr'), 'owner');
  await expect(usage.statement(gone, 25)).rejects.toMatchObject({ code: 'ACCOUNT_NOT_FOUND' });
  await expect(usage.statement(OPERATOR, 25)).rejects.toThrow();
  await expect(usage.statement(OPERATOR, 25)).rejects.not.toBeInstanceOf(ApiError);
});

it('reads a brand-new account: no entries, receipts or budgets', async () => {
  const accounts = new Accounts(dbh.db);
  const a = await accounts.create(OPERATOR, `empty-${Date.now()}@example.com`, null);
  const person = await ownerOf(a.id);
  const owner = memberPrincipal(a.id, person, 'viewer');
  const s = await new Usage(dbh.db, ZONE).statement(owner, 25);
  expect(s.ledger).toEqual({ data: [], nextCursor: null });
  expect(s.receipts).toEqual([]);
  expect(s.budgets).toMatchObject({ budgets: [], keys: [], lowBalanceCents: null });
  expect(s.budgets.members.map((m) => m.personId)).toEqual([person]);
  expect(s.stamp).toBe(await new Usage(dbh.db, ZONE).stamp(owner));
});
