// `rendergate audit verify --account A` as an operator runs it (bin/rendergate.mjs, its own process,
// on DATABASE_URL): a whole chain prints the number checked and exits 0; a row whose details were
// changed, a deleted row and two rows swapped are each named, exit 1.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../../src/audit/record.ts';
import { insertAccount } from '../../../src/db/accounts.ts';
import { transaction, type Db } from '../../../src/db/pool.ts';
import { newId } from '../../../src/domain/ids.ts';
import { OPERATOR } from '../../../src/domain/principal.ts';
import { freshDatabase } from '../../helpers/db.ts';

const BIN = path.resolve(import.meta.dirname, '../../../bin/rendergate.mjs');
const TIMEOUT = 180_000; // a few spawns of the command line, each a second or more when loaded

let db: Db;
let url: string;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, url, drop } = await freshDatabase());
});
afterAll(() => drop());

function verify(account: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-audit-'));
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: url };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'audit', 'verify', '--account', account],
      { cwd, env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** An account with five events; their ids in chain order. */
async function chain(): Promise<{ acct: string; email: string; ids: string[] }> {
  const acct = newId('acct');
  const email = `${acct}@example.com`;
  await insertAccount(db, acct, email, null);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const e = await transaction(db, (tx) =>
      recordAudit(tx, {
        account: acct,
        action: 'credit.added',
        actor: OPERATOR,
        details: { amountCents: 100 + i },
      }),
    );
    ids.push(e.id);
  }
  return { acct, email, ids };
}

describe('rendergate audit verify', () => {
  it(
    'prints the number checked and exits 0 for a whole chain (by id or email)',
    { timeout: TIMEOUT },
    async () => {
      const { acct, email } = await chain();
      const r = await verify(email);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`5 events checked: the audit chain of ${acct} holds\n`);
      const empty = newId('acct');
      await insertAccount(db, empty, `${empty}@example.com`, null);
      expect((await verify(empty)).stdout).toBe(
        `0 events checked: the audit chain of ${empty} holds\n`,
      );
    },
  );

  it(
    'names a changed row, a deleted row and a swapped pair, exit 1',
    { timeout: TIMEOUT },
    async () => {
      const changed = await chain();
      await db.query(`UPDATE audit_events SET details = '{"amountCents": 1}' WHERE id = $1`, [
        changed.ids[2],
      ]);
      const deleted = await chain();
      await db.query('DELETE FROM audit_events WHERE id = $1', [deleted.ids[1]]);
      const swapped = await chain();
      await db.query('UPDATE audit_events SET seq = 100 WHERE id = $1', [swapped.ids[3]]);
      await db.query('UPDATE audit_events SET seq = 4 WHERE id = $1', [swapped.ids[4]]);
      await db.query('UPDATE audit_events SET seq = 5 WHERE id = $1', [swapped.ids[3]]);

      const a = await verify(changed.acct);
      expect(a.code).toBe(1);
      expect(a.stderr).toContain(`breaks at event ${changed.ids[2]} (number 3): its hash`);
      expect(a.stderr).toContain('2 events before it hold');
      const b = await verify(deleted.acct);
      expect(b.code).toBe(1);
      expect(b.stderr).toContain(`breaks at event ${deleted.ids[2]} (number 3): its prevHash`);
      const c = await verify(swapped.acct);
      expect(c.code).toBe(1);
      expect(c.stderr).toContain(`breaks at event ${swapped.ids[4]} (number 4): its prevHash`);
      expect(a.stdout + b.stdout + c.stdout).toBe('');
    },
  );
});
