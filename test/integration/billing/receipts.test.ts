// Receipts (docs/billing.md "Receipts"): every credit and every reversal of a payment numbered in
// one gapless sequence per series and year, whatever runs at once and whatever rolls back; each
// downloads from the studio's Usage page as a PDF naming the operator, the account, the amount
// and how it was paid; another account's is a 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';
import { StudioSession } from '../../studio/http-session.ts';
import { transaction } from '../../../src/db/pool.ts';
import { creditIn, reverseIn } from '../../../src/ledger/ledger.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, {
    env: {
      RENDERGATE_OPERATOR_NAME: 'Example Renders GmbH',
      RENDERGATE_OPERATOR_ADDRESS: 'Hauptstraße 1|10115 Berlin',
      RENDERGATE_WORKER_CONCURRENCY: '0',
    },
  });
  api = client(svc.base);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

const q = async (sql: string, params: unknown[] = []) => (await dbh.db.query(sql, params)).rows;

/** The text a PDF shows: pdfkit writes each line as hex strings of WinAnsi codes in TJ arrays. */
function pdfText(pdf: string): string {
  const lines: string[] = [];
  for (const m of pdf.matchAll(/\[([^\]]*)\]\s*TJ/g)) {
    const hex = [...m[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((x) => x[1]).join('');
    const bytes = Buffer.from(hex, 'hex');
    lines.push([...bytes].map((b) => (b === 0x80 ? '€' : String.fromCharCode(b))).join(''));
  }
  return lines.join('\n');
}

describe('receipts', () => {
  it('numbers 40 concurrent credits, and none of those rolled back, without a gap', async () => {
    const a = await api.admin('POST', '/accounts', { email: 'gapless@example.test' });
    const rolledBack = Array.from({ length: 10 }, () =>
      transaction(dbh.db, async (tx) => {
        await creditIn(tx, { accountId: a.id, amountCents: 7, reason: 'never' });
        throw new Error('rolled back after its number was taken');
      }).catch(() => 'rolled back'),
    );
    const made = Array.from({ length: 40 }, (_, i) =>
      api.admin('POST', `/accounts/${a.id}/credits`, { amountCents: 100 + i }),
    );
    await Promise.all([...rolledBack, ...made]);
    const rows = await q(
      `SELECT number, seq, year FROM receipts WHERE series = 'R' ORDER BY year, seq`,
    );
    expect(rows.length).toBe(40);
    rows.forEach((r, i) => {
      expect(r.seq).toBe(i + 1);
      expect(r.number).toBe(`R-${r.year}-${String(i + 1).padStart(6, '0')}`);
    });
    const [c] = await q(`SELECT last FROM receipt_counters WHERE series = 'R'`);
    expect(c.last).toBe(40);
    expect(await q("SELECT 1 FROM ledger_entries WHERE reason = 'never'")).toEqual([]);
  });

  it('gives a reversal its credit note, and a shortfall made good none', async () => {
    const a = await api.admin('POST', '/accounts', { email: 'reversed@example.test' });
    await api.admin('POST', `/accounts/${a.id}/credits`, { amountCents: 500 });
    await transaction(dbh.db, (tx) =>
      reverseIn(tx, { accountId: a.id, amountCents: 800, reason: 'Stripe refund of Checkout x' }),
    );
    // The next credit first pays the 300 short: a bookkeeping reversal, no credit note.
    await api.admin('POST', `/accounts/${a.id}/credits`, { amountCents: 1000 });
    const rows = await q(
      'SELECT series, amount_cents, reason FROM receipts WHERE account_id = $1 ORDER BY created_at',
      [a.id],
    );
    expect(rows.map((r) => [r.series, r.amount_cents])).toEqual([
      ['R', 500],
      ['CN', 500],
      ['R', 1000],
    ]);
    const entries = await q(
      "SELECT 1 FROM ledger_entries WHERE account_id = $1 AND kind = 'reversal'",
      [a.id],
    );
    expect(entries.length).toBe(2);
  });

  it("downloads as a PDF from Usage, and another account's is a 404", async () => {
    const s = new StudioSession(svc.base);
    const email = await s.signUp();
    const [acct] = await q('SELECT id FROM accounts WHERE lower(email) = lower($1)', [email]);
    await api.admin('POST', `/accounts/${acct.id}/credits`, {
      amountCents: 1250,
      reason: 'welcome',
    });
    const usage = await s.get('/usage');
    const link = /href="\/usage\/receipts\/(R-\d{4}-\d{6})\.pdf"/.exec(usage.text);
    expect(link).not.toBeNull();
    const res = await fetch(`${svc.base}/usage/receipts/${link![1]}.pdf`, {
      headers: { cookie: s.cookieHeader() },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await res.arrayBuffer()).toString('latin1');
    expect(pdf.startsWith('%PDF-')).toBe(true);
    expect(pdf.trimEnd().endsWith('%%EOF')).toBe(true);
    const text = pdfText(pdf);
    for (const want of [
      link![1],
      'Example Renders GmbH',
      'Hauptstraße 1',
      '10115 Berlin',
      email,
      acct.id,
      '€12.50',
      'Credit from the operator: welcome',
    ])
      expect(text).toContain(want);
    const other = await api.admin('POST', '/accounts', { email: 'other@example.test' });
    await api.admin('POST', `/accounts/${other.id}/credits`, { amountCents: 100 });
    const [theirs] = await q('SELECT number FROM receipts WHERE account_id = $1', [other.id]);
    const stolen = await fetch(`${svc.base}/usage/receipts/${theirs.number}.pdf`, {
      headers: { cookie: s.cookieHeader() },
    });
    expect(stolen.status).toBe(404);
    const junk = await fetch(`${svc.base}/usage/receipts/..%2F..%2Fetc.pdf`, {
      headers: { cookie: s.cookieHeader() },
    });
    expect(junk.status).toBe(404);
  });
});
