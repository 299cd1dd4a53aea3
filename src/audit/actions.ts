// The audit log's actions (docs/api.md "Audit log"): one closed list, so an event of an action the
// contract does not name cannot be written, and the studio's filter offers exactly these. Each has
// a writer in the change it records. The two alerts (`account.balance_low`,
// `budget.threshold_reached`) are the budgets issue's, beside the contract's list.
export const AUDIT_ACTIONS = [
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'invite.revoked',
  'key.created',
  'key.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.deleted',
  'credit.added',
  'credit.reversed',
  'budget.changed',
  'alert.changed',
  'auto_recharge.changed',
  'auto_recharge.charged',
  'auto_recharge.failed',
  'session.signed_in',
  'session.sign_in_failed',
  'password.changed',
  'two_factor.enabled',
  'two_factor.disabled',
  'account.renamed',
  // the alerts themselves (docs/billing.md "Alerts"), written by the worker as the system
  'account.balance_low',
  'budget.threshold_reached',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

const KNOWN: ReadonlySet<string> = new Set(AUDIT_ACTIONS);

/** Whether `s` is one of the actions (a filter's value read from a query string). */
export const isAuditAction = (s: string): s is AuditAction => KNOWN.has(s);
