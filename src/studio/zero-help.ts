// No dead end at €0 (docs/billing.md "An account at €0"): Models, a model's page and Usage tell an
// account with nothing to spend how to get credit before its first render is refused (Add credit
// where Stripe is configured, else the operator's words, RENDERGATE_CREDIT_HELP) and offer a
// test key, with which every model can be tried free. Shown by views/zero-help.eta.
import type { StudioCtx } from './types.ts';

export interface ZeroHelp {
  /** Add credit is there (Stripe configured). */
  addCredit: boolean;
  /** The operator's words, or null for the generic sentence. */
  words: string | null;
}

export const zeroHelp = (ctx: StudioCtx): ZeroHelp => ({
  addCredit: ctx.topups !== null,
  words: ctx.config.billing.creditHelp,
});
