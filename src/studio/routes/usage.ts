// Usage: the balance, the ledger (credits, charges, refunds) page by page and as CSV, and the spend per
// key and per model over a chosen period.
import type { FastifyInstance } from 'fastify';
import type { LedgerEntry } from '../../services/accounts.ts';
import { ApiError } from '../../domain/errors.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';
import { cell } from '../csv.ts';
import { zeroHelp } from '../zero-help.ts';
import { usageSpend } from '../usage-figures.ts';
import { budgetsPanel } from './budgets.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MONTH = /^\d{4}-\d{2}$/;
const CSV_PAGE = 100;
/** Ledger entries a page of /usage shows. */
const LEDGER_PAGE = 25;

export function registerUsageRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };

  type Query = { cursor?: string; from?: string; to?: string; month?: string };
  app.get<{ Querystring: Query }>('/usage', pre, async (req, reply) => {
    const today = new Date().toISOString().slice(0, 10);
    const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
    const from =
      typeof req.query.from === 'string' && DAY.test(req.query.from) ? req.query.from : monthAgo;
    const to = typeof req.query.to === 'string' && DAY.test(req.query.to) ? req.query.to : today;
    const fromD = new Date(`${from}T00:00:00Z`);
    const toD = new Date(new Date(`${to}T00:00:00Z`).getTime() + 86_400_000);
    if (Number.isNaN(fromD.getTime()) || Number.isNaN(toD.getTime()))
      return reply.redirect('/usage', 303);
    // a month of the range whose days the table shows (another: the range's last)
    const month =
      typeof req.query.month === 'string' && MONTH.test(req.query.month) ? req.query.month : null;
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : null;
    const p = req.principal;
    // The first page in one statement (stamp, entries, receipts, budgets), and the spend figures
    // only when that stamp is new; a later page of the ledger with every part at once, so it
    // waits for the slowest read, not for their sum.
    const first = cursor === null ? await ctx.usage.statement(p, LEDGER_PAGE) : null;
    const [ledger, spend, receipts, panel] = first
      ? [
          first.ledger,
          await usageSpend(ctx, p, from, to, month, first.stamp),
          first.receipts,
          first.budgets,
        ]
      : await Promise.all([
          ctx.accounts.ledger(p, LEDGER_PAGE, cursor).catch((e: unknown) => {
            if (e instanceof ApiError && e.code === 'INVALID_INPUT') return null;
            throw e;
          }),
          usageSpend(ctx, p, from, to, month),
          ctx.receipts.list(p),
          ctx.budgets.panel(p),
        ]);
    // a cursor that is not one of ours
    if (ledger === null) return reply.redirect('/usage', 303);
    const budgets = budgetsPanel(p, panel);
    return page(reply.code(spend.chartError ? 400 : 200), 'usage', req, {
      spendHtml: spend.html,
      title: 'Usage',
      receipts,
      zero: zeroHelp(ctx),
      ledger: ledger.data,
      nextCursor: ledger.nextCursor,
      from,
      to,
      budgets,
    });
  });

  // A receipt or credit note as a PDF (services/receipt-pdf.ts); another account's is a 404.
  app.get<{ Params: { number: string } }>('/usage/receipts/:number', pre, async (req, reply) => {
    const number = req.params.number.replace(/\.pdf$/, '');
    const r = await ctx.receipts.pdf(req.principal, number);
    return reply
      .header('content-type', 'application/pdf')
      .header('content-disposition', `attachment; filename="${r.number}.pdf"`)
      .header('cache-control', 'private, no-store')
      .send(r.pdf);
  });

  // The whole ledger, streamed page by page (keyset paging, so a long history never sits in memory).
  app.get('/usage/ledger.csv', pre, async (req, reply) => {
    reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="ledger.csv"')
      .header('cache-control', 'no-store');
    const who = req.principal;
    async function* rows() {
      yield 'id,createdAt,kind,amountCents,amountEur,generationId,reason\r\n';
      let cursor: string | null = null;
      do {
        const p: { data: LedgerEntry[]; nextCursor: string | null } = await ctx.accounts.ledger(
          who,
          CSV_PAGE,
          cursor,
        );
        for (const e of p.data) {
          const signed = e.kind === 'charge' ? -e.amountCents : e.amountCents;
          yield (
            [e.id, e.createdAt, e.kind, signed, (signed / 100).toFixed(2), e.generationId, e.reason]
              .map(cell)
              .join(',') + '\r\n'
          );
        }
        cursor = p.nextCursor;
      } while (cursor);
    }
    const { Readable } = await import('node:stream');
    return reply.send(Readable.from(rows()));
  });
}
