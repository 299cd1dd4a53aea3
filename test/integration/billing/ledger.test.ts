// The ledger's operations (src/ledger/) on a real database, without a service: refunds of part
// (new, for the auto-refunds of partial failures) beside the whole refund, under concurrency, with
// creates on the same account and key, and the database's own refusal of a refund past the price
// (migrations/027). Every scenario ends with the money invariants.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.ts';
import { Ledger, type ChargeItem } from '../../../src/ledger/ledger.ts';
import { createAccount } from '../../../src/services/accounts.ts';
import { createKey } from '../../../src/services/keys.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import { OPERATOR } from '../../../src/domain/principal.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let ledger: Ledger;
beforeAll(async () => {
  dbh = await freshDatabase();
  ledger = new Ledger(dbh.db, 'UTC');
});
afterAll(async () => {
  await checkInvariants(dbh.db);
  await dbh.drop();
});

const q = async (sql: string, values: unknown[] = []) => (await dbh.db.query(sql, values)).rows;
const balance = async (accountId: string) =>
  Number(
    (await q('SELECT balance_cents FROM accounts WHERE id = $1', [accountId]))[0].balance_cents,
  );
const dayUsage = async (keyId: string) =>
  Number(
    (
      await q('SELECT coalesce(sum(spent_cents), 0) AS s FROM key_day_usage WHERE key_id = $1', [
        keyId,
      ])
    )[0].s,
  );
const refunds = async (generationId: string) =>
  (
    await q(
      `SELECT amount_cents FROM ledger_entries WHERE generation_id = $1 AND kind = 'refund'
       ORDER BY id`,
      [generationId],
    )
  ).map((r) => Number(r.amount_cents));

/** An account holding `cents`, with a live and a test key. */
async function account(cents: number) {
  const a = await createAccount(dbh.db, `${crypto.randomUUID()}@example.com`, null);
  if (cents > 0) await ledger.credit(a.id, cents, 'test credit');
  const live = await createKey(dbh.db, 'rg_', 60, a.id, {}, { by: OPERATOR });
  const test = await createKey(dbh.db, 'rg_', 60, a.id, { mode: 'test' }, { by: OPERATOR });
  return { id: a.id, liveKey: live.id, testKey: test.id };
}

const item = (accountId: string, keyId: string | null, cost: number): ChargeItem => ({
  id: newId('gen'),
  accountId,
  keyId,
  idempotencyKey: crypto.randomUUID(),
  requestHash: crypto.randomBytes(32),
  modelId: 'test/model',
  inputs: { prompt: 'x' },
  cost,
  deadlineSeconds: 3600,
  dailyCapCents: null,
});

/** A render as a worker leaves it once it has succeeded (the worker is not what is tested here). */
async function succeeded(id: string) {
  await q(
    `UPDATE generations SET status = 'succeeded', started_at = now(), completed_at = now(),
       text_output = 'done' WHERE id = $1`,
    [id],
  );
}

async function charged(accountId: string, keyId: string | null, cost: number) {
  const it = item(accountId, keyId, cost);
  const made = await ledger.charge(it);
  expect(made.outcome).toBe('created');
  return it.id;
}

describe('a refund of part', () => {
  it('returns that much, more than once, never past the price; a whole refund returns the rest', async () => {
    const a = await account(1_000);
    const id = await charged(a.id, a.liveKey, 100);
    await succeeded(id);
    expect(await ledger.refundPart(id, 30, '1 of 3 outputs failed')).toBe(30);
    expect(await balance(a.id)).toBe(930);
    expect(await dayUsage(a.liveKey)).toBe(70);
    expect(await ledger.refundPart(id, 80)).toBeNull(); // 30 + 80 would pass 100
    expect(await ledger.refundPart(id, 50)).toBe(50);
    const whole = { status: 'refunded' as const, code: 'REFUNDED_BY_OPERATOR' as const };
    expect(await ledger.refund(id, 'succeeded', { ...whole, message: 'returned' })).toBe(20);
    expect(await ledger.refund(id, 'succeeded', { ...whole, message: 'again' })).toBeNull();
    expect(await ledger.refundPart(id, 1)).toBeNull(); // no longer succeeded
    expect(await refunds(id)).toEqual([30, 50, 20]);
    const [g] = await q('SELECT status, refunded_cents FROM generations WHERE id = $1', [id]);
    expect(g).toEqual({ status: 'refunded', refunded_cents: 100 });
    expect(await balance(a.id)).toBe(1_000);
    expect(await dayUsage(a.liveKey)).toBe(0);
    const [entry] = await q(
      `SELECT reason FROM ledger_entries WHERE generation_id = $1
      AND kind = 'refund' ORDER BY id LIMIT 1`,
      [id],
    );
    expect(entry.reason).toBe('1 of 3 outputs failed');
    await checkInvariants(dbh.db);
  });

  it('40 at once return exactly the price, racing whole refunds that return the rest once', async () => {
    const a = await account(500);
    const id = await charged(a.id, a.liveKey, 100);
    await succeeded(id);
    const whole = {
      status: 'refunded' as const,
      code: 'REFUNDED_BY_OPERATOR' as const,
      message: 'returned',
    };
    const results = await Promise.all([
      ...Array.from({ length: 40 }, () => ledger.refundPart(id, 7)),
      ...Array.from({ length: 3 }, () => ledger.refund(id, 'succeeded', whole)),
    ]);
    const parts = results.slice(0, 40).filter((r) => r !== null);
    const wholes = results.slice(40).filter((r) => r !== null);
    expect(wholes).toHaveLength(1);
    // Whatever the order: the parts taken and the rest the whole refund returned make the price.
    expect(parts.reduce((s, r) => s + r, 0) + wholes[0]).toBe(100);
    expect((await refunds(id)).reduce((s, r) => s + r, 0)).toBe(100);
    expect(await balance(a.id)).toBe(500);
    expect(await dayUsage(a.liveKey)).toBe(0);
    await checkInvariants(dbh.db);
  });

  it('is refused on a queued render; a test render gets back its day, no money', async () => {
    const a = await account(200);
    const queued = await charged(a.id, a.liveKey, 50);
    expect(await ledger.refundPart(queued, 10)).toBeNull();
    const t = { ...item(a.id, a.testKey, 40) };
    expect((await ledger.recordTest(t)).outcome).toBe('created');
    await succeeded(t.id);
    expect(await dayUsage(a.testKey)).toBe(40);
    expect(await ledger.refundPart(t.id, 15)).toBe(0);
    expect(await dayUsage(a.testKey)).toBe(25);
    expect(await balance(a.id)).toBe(150);
    expect(await q('SELECT id FROM ledger_entries WHERE generation_id = $1', [t.id])).toEqual([]);
    await expect(ledger.refundPart(t.id, 0)).rejects.toThrow(RangeError);
    await expect(ledger.refundPart(t.id, 1.5)).rejects.toThrow(RangeError);
    await checkInvariants(dbh.db);
  });

  it('runs beside creates and whole refunds on one account and key, without a deadlock', async () => {
    const a = await account(10_000);
    const done = await Promise.all(Array.from({ length: 20 }, () => charged(a.id, a.liveKey, 30)));
    for (const id of done) await succeeded(id);
    const cancel = { status: 'refunded' as const, code: 'CANCELLED' as const, message: 'x' };
    const queued = await Promise.all(
      Array.from({ length: 20 }, () => charged(a.id, a.liveKey, 30)),
    );
    const outcomes = await Promise.all([
      ...done.map((id) => ledger.refundPart(id, 10)),
      ...queued.map((id) => ledger.refund(id, 'queued', cancel)),
      ...Array.from({ length: 20 }, () => ledger.charge(item(a.id, a.liveKey, 30))),
    ]);
    expect(outcomes.slice(0, 40).every((r) => r !== null)).toBe(true);
    // 20 renders kept (30 each, 10 of each back) and 20 more created: 20 × 20 + 20 × 30.
    expect(await balance(a.id)).toBe(10_000 - 20 * 20 - 20 * 30);
    expect(await dayUsage(a.liveKey)).toBe(20 * 20 + 20 * 30);
    await checkInvariants(dbh.db);
  });
});

describe('the database', () => {
  it('refuses a refund past the price, or of a queued render, whatever the statement', async () => {
    const a = await account(100);
    const id = await charged(a.id, null, 60);
    const write = (sql: string) => q(sql, [id]);
    await expect(
      write('UPDATE generations SET refunded_cents = 1 WHERE id = $1'),
    ).rejects.toMatchObject({ code: '23514' });
    await succeeded(id);
    await expect(
      write('UPDATE generations SET refunded_cents = 61 WHERE id = $1'),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      write(`UPDATE generations SET status = 'failed', refunded_cents = 59 WHERE id = $1`),
    ).rejects.toMatchObject({ code: '23514' });
    // A second charge of one render stays impossible.
    await expect(
      q(
        `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id)
         VALUES ($1, $2, 'charge', 60, $3)`,
        [newId('led'), a.id, id],
      ),
    ).rejects.toMatchObject({ code: '23505' });
  });
});
