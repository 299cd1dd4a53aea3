// Recording audit events (docs/api.md "Audit log") on the real PostgreSQL: an event commits or
// rolls back with its change, concurrent writers of one account make one unbroken chain, and the
// walk of `rendergate audit verify` finds a changed, removed or reordered row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../../src/audit/record.ts';
import { verifyChain } from '../../../src/audit/verify.ts';
import { GENESIS_HASH } from '../../../src/audit/chain.ts';
import { insertAccount } from '../../../src/db/accounts.ts';
import { transaction, type Db } from '../../../src/db/pool.ts';
import { newId } from '../../../src/domain/ids.ts';
import { memberPrincipal, OPERATOR } from '../../../src/domain/principal.ts';
import { freshDatabase } from '../../helpers/db.ts';

let db: Db;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ db, drop } = await freshDatabase());
});
afterAll(() => drop());

async function account(): Promise<string> {
  const id = newId('acct');
  await insertAccount(db, id, `${id}@example.com`, null);
  return id;
}

/** The account's person, its owner (migrations/030 names them after the account). */
const owner = (acct: string) => `usr_${acct.slice('acct_'.length)}`;

const record = (acct: string, i: number) =>
  transaction(db, (tx) =>
    recordAudit(tx, {
      account: acct,
      action: 'key.created',
      actor: memberPrincipal(acct, owner(acct), 'owner'),
      target: { type: 'api_key', id: `key_${i}` },
      ip: '198.51.100.7',
      userAgent: 'test',
      details: { i },
    }),
  );

describe('recordAudit', () => {
  it('writes the event with its change, the member named by email, the first linked to zeros', async () => {
    const acct = await account();
    const e = await record(acct, 0);
    expect(e).toMatchObject({
      id: expect.stringMatching(/^aud_[0-9a-f]{32}$/),
      action: 'key.created',
      actor: { type: 'member', id: owner(acct), email: `${acct}@example.com` },
      target: { type: 'api_key', id: 'key_0' },
      ip: '198.51.100.7',
      userAgent: 'test',
      details: { i: 0 },
      prevHash: GENESIS_HASH,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    await expect(
      transaction(db, async (tx) => {
        await recordAudit(tx, { account: acct, action: 'key.revoked', actor: OPERATOR });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const { rows } = await db.query('SELECT action FROM audit_events WHERE account_id = $1', [
      acct,
    ]);
    expect(rows).toEqual([{ action: 'key.created' }]);
  });

  it('keeps one unbroken chain under 50 concurrent writers of one account', async () => {
    const acct = await account();
    const other = await account();
    await Promise.all([
      ...Array.from({ length: 50 }, (_, i) => record(acct, i)),
      ...Array.from({ length: 10 }, (_, i) => record(other, i)),
    ]);
    expect(await verifyChain(db, acct)).toEqual({ ok: true, checked: 50 });
    expect(await verifyChain(db, other)).toEqual({ ok: true, checked: 10 });
    const { rows } = await db.query(
      `SELECT count(DISTINCT prev_hash)::int AS links, max(seq)::int AS last,
              count(DISTINCT details ->> 'i')::int AS events
       FROM audit_events WHERE account_id = $1`,
      [acct],
    );
    expect(rows[0]).toEqual({ links: 50, last: 50, events: 50 });
  });

  describe('the chain walk', () => {
    const chainOf5 = async () => {
      const acct = await account();
      for (let i = 0; i < 5; i++) await record(acct, i);
      const { rows } = await db.query(
        'SELECT id FROM audit_events WHERE account_id = $1 ORDER BY seq',
        [acct],
      );
      return { acct, ids: rows.map((r: { id: string }) => r.id) };
    };

    it('finds a row whose details were changed', async () => {
      const { acct, ids } = await chainOf5();
      await db.query(`UPDATE audit_events SET details = '{"i": 9}' WHERE id = $1`, [ids[2]]);
      expect(await verifyChain(db, acct)).toMatchObject({
        ok: false,
        checked: 2,
        at: { id: ids[2], problem: 'hash' },
      });
    });

    it('finds a deleted row', async () => {
      const { acct, ids } = await chainOf5();
      await db.query('DELETE FROM audit_events WHERE id = $1', [ids[1]]);
      expect(await verifyChain(db, acct)).toMatchObject({
        ok: false,
        at: { id: ids[2], problem: 'link' },
      });
    });

    it('finds two rows swapped', async () => {
      const { acct, ids } = await chainOf5();
      // the 4th and 5th events change places (through a free number: seq is unique)
      await db.query('UPDATE audit_events SET seq = 100 WHERE id = $1', [ids[3]]);
      await db.query('UPDATE audit_events SET seq = 4 WHERE id = $1', [ids[4]]);
      await db.query('UPDATE audit_events SET seq = 5 WHERE id = $1', [ids[3]]);
      expect(await verifyChain(db, acct)).toMatchObject({
        ok: false,
        checked: 3,
        at: { id: ids[4], problem: 'link' },
      });
    });
  });
});
