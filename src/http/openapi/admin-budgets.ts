// The admin document's part on budgets and the low-balance alert (docs/api.md "Budgets", "Alerts"):
// its paths and schemas, spread into admin-document.ts, which hands over its helpers.
import type { AdminHelpers } from './admin-helpers.ts';
type Helpers = AdminHelpers;

const str = { type: 'string' };
const int = { type: 'integer' };
const PERIODS = ['day', 'week', 'month', 'total'];
const path = (name: string) => ({ name, in: 'path', required: true, schema: str });
const PERIOD = { name: 'period', in: 'path', required: true, schema: { enum: PERIODS } };

/** One subject's three operations on its budgets (`what`: whose, as the summaries say it). */
function budgetPaths(h: Helpers, base: string, name: string, what: string, params: unknown[]) {
  return {
    [`${base}/budgets`]: {
      get: h.op(
        `list${name}Budgets`,
        `${what} budgets.`,
        '200',
        'BudgetList',
        { parameters: params },
        [404],
      ),
    },
    [`${base}/budgets/{period}`]: {
      put: h.op(
        `set${name}Budget`,
        `Set ${what} budget of the period.`,
        '200',
        'BudgetList',
        { parameters: [...params, PERIOD], requestBody: h.body('BudgetSet') },
        [404],
      ),
      delete: h.op(
        `remove${name}Budget`,
        `Remove ${what} budget of the period.`,
        '200',
        'BudgetList',
        { parameters: [...params, PERIOD] },
        [404],
      ),
    },
  };
}

export function budgetAdminPaths(h: Helpers) {
  return {
    ...budgetPaths(h, '/accounts/{id}', 'Account', "the account's", [path('id')]),
    ...budgetPaths(h, '/accounts/{id}/members/{userId}', 'Member', "the member's", [
      path('id'),
      path('userId'),
    ]),
    ...budgetPaths(h, '/keys/{id}', 'Key', "the key's", [path('id')]),
  };
}

/** PATCH /accounts/{id}: the low-balance alert (merged into that path by admin-document.ts). */
export function accountPatch(h: Helpers) {
  return h.op(
    'updateAccount',
    "Set (or with null remove) the account's low-balance alert; never above the balance.",
    '200',
    'Account',
    { parameters: [path('id')], requestBody: h.body('AccountUpdate') },
    [404],
  );
}

export function budgetAdminSchemas({ ref, obj }: Helpers) {
  return {
    Budget: obj(['period', 'limitCents', 'spentCents', 'resetsAt'], {
      period: { enum: PERIODS },
      limitCents: int,
      spentCents: int,
      resetsAt: { type: ['string', 'null'], format: 'date-time' },
    }),
    BudgetList: obj(['data'], { data: { type: 'array', items: ref('Budget') } }),
    BudgetSet: obj(['limitCents'], { limitCents: { ...int, minimum: 0, maximum: 1e12 } }),
    AccountUpdate: obj(['lowBalanceCents'], {
      lowBalanceCents: { type: ['integer', 'null'], minimum: 0, maximum: 1e12 },
    }),
  };
}
