// The worker's side of account alerts (docs/billing.md "Alerts"): each alert the ledger wrote to
// the outbox (migrations/036) is mailed to the account's owners and billing members and recorded in
// its audit log, once. The webhook event went out with the alert itself (the outbox of
// migrations/009). At least once: a worker that dies between the mail and the record leaves the
// lease to lapse, and the next one mails again; the audit event is written once, in the
// transaction that marks the alert done.
import type { Logger } from 'pino';
import { recordAudit } from '../audit/record.ts';
import { claimAlerts, finishAlert, type ClaimedAlert } from '../db/account-alerts.ts';
import { billingContacts } from '../db/memberships.ts';
import { transaction, type Db } from '../db/pool.ts';
import { SYSTEM } from '../domain/principal.ts';
import { mailBillingContacts, type Mailer } from './mail.ts';

const POLL_MS = 1_000;
/** Longer than a few mails take; a lapsed lease means the worker died. */
const LEASE_SECONDS = 120;
const BATCH = 16;

const euros = (cents: unknown) => `€${(Number(cents) / 100).toFixed(2)}`;

/** The mail of an alert: its subject and text. */
export function noticeOf(a: ClaimedAlert): { subject: string; text: string } {
  const d = a.data;
  if (a.kind === 'account.balance_low')
    return {
      subject: 'Rendergate: the balance is below its alert',
      text:
        `The balance of account ${a.account_id} is ${euros(d.balanceCents)}, below the ` +
        `low-balance alert of ${euros(d.thresholdCents)}. Add credit to keep renders running.`,
    };
  const whose = d.scope === 'account' ? 'The account' : `The ${String(d.scope)} ${String(d.id)}`;
  return {
    subject: `Rendergate: ${String(d.period)} budget at ${String(d.percent)} %`,
    text:
      `${whose} has spent ${euros(d.spentCents)} of its ${String(d.period)} budget of ` +
      `${euros(d.limitCents)} (${String(d.percent)} %) in account ${a.account_id}.` +
      (d.percent === 100 ? ' Renders beyond it are refused until the period ends.' : ''),
  };
}

export class AlertNotices {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private db: Db,
    private mailer: Mailer | null,
    private log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), POLL_MS);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round: every pending alert, a batch at a time; rounds never overlap. */
  tick(): Promise<void> {
    this.running ??= this.drain()
      .catch((e) => this.log.warn({ err: e }, 'account alerts: a round failed'))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const alerts = await claimAlerts(this.db, BATCH, LEASE_SECONDS);
      for (const a of alerts) await this.notify(a);
      if (alerts.length < BATCH) return;
    }
  }

  private async notify(a: ClaimedAlert): Promise<void> {
    const { subject, text } = noticeOf(a);
    const to = await billingContacts(this.db, a.account_id);
    await mailBillingContacts(this.mailer, to, subject, text);
    await transaction(this.db, async (tx) => {
      if (!(await finishAlert(tx, a.id))) return;
      await recordAudit(tx, {
        account: a.account_id,
        action: a.kind,
        actor: SYSTEM,
        target:
          a.kind === 'account.balance_low'
            ? { type: 'account', id: a.account_id }
            : { type: String(a.data.scope), id: String(a.data.id) },
        details: { ...a.data, mailedTo: to.length },
      });
    });
  }
}
