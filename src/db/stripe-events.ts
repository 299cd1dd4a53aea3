// Stripe events received and verified, with their outcome, for the operator console
// (migrations/014; `kept` and `reinstated` since migrations/024).
import type { Queryable } from './pool.ts';
import { newId } from '../domain/ids.ts';

export type StripeOutcome =
  'credited' | 'duplicate' | 'ignored' | 'refused' | 'reversed' | 'kept' | 'reinstated';

export interface StripeEventRecord {
  eventId: string;
  type: string;
  livemode: boolean;
  accountId: string | null;
  sessionId: string | null;
  amountCents: number | null;
  outcome: StripeOutcome;
  detail: string | null;
}

export async function recordStripeEvent(q: Queryable, e: StripeEventRecord): Promise<void> {
  await q.query(
    `INSERT INTO stripe_events (id, event_id, type, livemode, account_id, session_id, amount_cents, outcome, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      newId('sev'),
      e.eventId,
      e.type,
      e.livemode,
      e.accountId,
      e.sessionId,
      e.amountCents,
      e.outcome,
      e.detail?.slice(0, 500) ?? null,
    ],
  );
}

export interface StripeEventRow extends StripeEventRecord {
  id: string;
  receivedAt: Date;
}

interface StripeEventDbRow {
  id: string;
  event_id: string;
  type: string;
  livemode: boolean;
  account_id: string | null;
  session_id: string | null;
  amount_cents: number | null;
  outcome: StripeOutcome;
  detail: string | null;
  received_at: Date;
}

/** The newest events first; with `accountId`, that account's only. */
export async function listStripeEvents(
  q: Queryable,
  o: { limit: number; accountId?: string },
): Promise<StripeEventRow[]> {
  const { rows } = await q.query<StripeEventDbRow>(
    `SELECT * FROM stripe_events WHERE $1::text IS NULL OR account_id = $1 ORDER BY id DESC LIMIT $2`,
    [o.accountId ?? null, o.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    type: r.type,
    livemode: r.livemode,
    accountId: r.account_id,
    sessionId: r.session_id,
    amountCents: r.amount_cents,
    outcome: r.outcome,
    detail: r.detail,
    receivedAt: r.received_at,
  }));
}
