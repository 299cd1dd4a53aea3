// A receipt or credit note as a PDF (docs/billing.md "Receipts"), made with pdfkit: the number,
// the date, the operator's name and address, the account's name and owner email, the amount in
// euros and how it was paid (Stripe's own receipt linked when Stripe gave one). Uncompressed, so
// the text can be found in the file (a search, a test), at the cost of a few kilobytes.
import PDFDocument from 'pdfkit';
import type { ReceiptRow } from '../ledger/receipts.ts';

export interface ReceiptParty {
  operatorName: string;
  operatorAddress: string[];
  accountName: string | null;
  accountId: string;
  ownerEmail: string;
}

const euros = (cents: number) =>
  `€${(cents / 100).toLocaleString('en-IE', { minimumFractionDigits: 2 })}`;

/** How the money came or went, in words, from the ledger entry's reason. */
export function howPaid(r: Pick<ReceiptRow, 'series' | 'reason'>): string {
  const reason = r.reason ?? '';
  if (r.series === 'CN') return `Returned: ${reason || 'a reversal of a payment'}`;
  let m = /^Stripe Checkout (\S+)/.exec(reason);
  if (m) return `Card payment through Stripe Checkout (session ${m[1]})`;
  m = /^Stripe auto-recharge (\S+)/.exec(reason);
  if (m) return `Automatic card payment through Stripe, auto-recharge (payment ${m[1]})`;
  m = /^Stripe dispute won (\S+)/.exec(reason);
  if (m) return `Disputed payment returned by Stripe (dispute ${m[1]})`;
  return reason ? `Credit from the operator: ${reason}` : 'Credit from the operator';
}

export function receiptPdf(r: ReceiptRow, who: ReceiptParty): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: 56,
    compress: false,
    info: { Title: `${r.series === 'R' ? 'Receipt' : 'Credit note'} ${r.number}` },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.font('Helvetica-Bold').fontSize(18).text(who.operatorName);
  doc.font('Helvetica').fontSize(10);
  for (const line of who.operatorAddress) doc.text(line);
  doc.moveDown(2);
  doc.font('Helvetica-Bold').fontSize(16);
  doc.text(`${r.series === 'R' ? 'Receipt' : 'Credit note'} ${r.number}`);
  doc.font('Helvetica').fontSize(11).moveDown();
  doc.text(`Date: ${r.createdAt.toISOString().slice(0, 10)}`);
  doc.text(`Account: ${who.accountName ?? who.accountId} (${who.accountId})`);
  doc.text(`Owner: ${who.ownerEmail}`);
  doc.moveDown();
  doc.font('Helvetica-Bold').fontSize(14);
  doc.text(`${r.series === 'R' ? 'Amount received' : 'Amount returned'}: ${euros(r.amountCents)}`);
  doc.font('Helvetica').fontSize(11).moveDown();
  doc.text(howPaid(r));
  if (r.receiptUrl) {
    doc.moveDown().fillColor('#1a4fa0');
    doc.text("Stripe's receipt of the payment", { link: r.receiptUrl, underline: true });
    doc.fillColor('black');
  }
  doc.moveDown(2).fontSize(9).fillColor('#555');
  doc.text('Prepaid credit for renders; amounts in euros.');
  doc.end();
  return done;
}
