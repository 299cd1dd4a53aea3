// Receipts and credit notes (docs/billing.md "Receipts"): every credit and every reversal of a
// payment has one, numbered without gaps by the ledger (ledger/sql/number_receipt.sql); this
// lists an account's and renders one as a PDF (receipt-pdf.ts).
import type { Db } from '../db/pool.ts';
import type { BillingConfig } from '../config/billing.ts';
import { ApiError } from '../domain/errors.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';
import { accountById } from '../db/accounts.ts';
import { receiptOf, receiptsOf, type ReceiptRow } from '../ledger/receipts.ts';
import { howPaid, receiptPdf } from './receipt-pdf.ts';

export const RECEIPT_NUMBER = /^(R|CN)-\d{4}-\d{6,}$/;

export interface ReceiptView extends ReceiptRow {
  howPaid: string;
}

/** A receipt as the studio lists it. */
export const receiptView = (r: ReceiptRow): ReceiptView => ({ ...r, howPaid: howPaid(r) });

export class Receipts {
  constructor(
    private db: Db,
    private billing: BillingConfig,
  ) {}

  async list(p: Principal): Promise<ReceiptView[]> {
    const accountId = accountFor(p, 'receipts.view');
    return (await receiptsOf(this.db, accountId)).map(receiptView);
  }

  /** The PDF of the account's receipt `number`; 404 NOT_FOUND for any other. */
  async pdf(p: Principal, number: string): Promise<{ number: string; pdf: Buffer }> {
    const accountId = accountFor(p, 'receipts.view');
    const r = RECEIPT_NUMBER.test(number) ? await receiptOf(this.db, accountId, number) : null;
    if (!r) throw new ApiError('NOT_FOUND', `No receipt ${number.slice(0, 40)} in this account.`);
    const a = (await accountById(this.db, accountId))!;
    const pdf = await receiptPdf(r, {
      operatorName: this.billing.operatorName,
      operatorAddress: this.billing.operatorAddress,
      accountName: a.name,
      accountId,
      ownerEmail: a.email,
    });
    return { number: r.number, pdf };
  }
}
