// The operator's billing variables (docs/billing.md): who issues the receipts, how many
// auto-recharges an account may make a day, what an account at €0 is told, the sign-up
// credit.
import { envReader } from './env-reader.ts';

export interface BillingConfig {
  /** RENDERGATE_OPERATOR_NAME: the issuer named on every receipt. */
  operatorName: string;
  /** RENDERGATE_OPERATOR_ADDRESS: its postal address, lines split at `\n` or `|`. */
  operatorAddress: string[];
  /** RENDERGATE_AUTO_RECHARGE_PER_DAY: recharges an account may make a day (default 3). */
  autoRechargePerDay: number;
  /**
   * RENDERGATE_CREDIT_HELP: the operator's words telling an account at €0 how to get credit where
   * Stripe is not configured (an address to write to, a form); null: a generic sentence.
   */
  creditHelp: string | null;
  /** RENDERGATE_SIGNUP_CREDIT_CENTS: credit every self sign-up receives (0: none). */
  signupCreditCents: number;
}

/** The billing block of the configuration; problems go to `problems`. */
export function billingConfig(env: NodeJS.ProcessEnv, problems: string[]): BillingConfig {
  const { int } = envReader(env, problems);
  const text = (name: string, max: number): string | null => {
    const raw = (env[name] ?? '').trim();
    if (!raw) return null;
    // Printable text only: it is shown on pages and written into PDFs.
    const control = [...raw].some((c) => c !== '\n' && (c < ' ' || c === '\u007f'));
    if (raw.length > max || control) {
      problems.push(`${name}: at most ${max} characters of printable text`);
      return null;
    }
    return raw;
  };
  const address = text('RENDERGATE_OPERATOR_ADDRESS', 500);
  return {
    operatorName: text('RENDERGATE_OPERATOR_NAME', 200) ?? 'Rendergate',
    operatorAddress: address
      ? address
          .split(/\\n|\n|\|/)
          .map((l) => l.trim())
          .filter(Boolean)
      : [],
    autoRechargePerDay: int('RENDERGATE_AUTO_RECHARGE_PER_DAY', 3, 1, 100),
    creditHelp: text('RENDERGATE_CREDIT_HELP', 1000),
    signupCreditCents: int('RENDERGATE_SIGNUP_CREDIT_CENTS', 0, 0, 100_000_000),
  };
}
