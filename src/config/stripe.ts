// Stripe Checkout top-ups' variables (docs/billing.md): RENDERGATE_STRIPE_*, RENDERGATE_TOPUP_AMOUNTS.
import { envReader } from './env-reader.ts';
export interface StripeConfig {
  secretKey: string;
  webhookSecret: string;
  /** The amounts an account owner may choose, in cents, ascending. */
  topupAmounts: number[];
  /** Where the Stripe client sends its requests (RENDERGATE_STRIPE_API_BASE); null: Stripe's own. */
  api: { host: string; port: number; protocol: 'http' | 'https' } | null;
  /** The origin of Checkout pages, allowed as a form-action target of the Add credit page. */
  checkoutOrigin: string;
  /** Requests to /webhooks/stripe per address a minute, before its signature check (0: any). */
  webhookPerMinute: number;
}

/** The Stripe block of the configuration; null without both secrets. Problems go to `problems`. */
export function stripeConfig(env: NodeJS.ProcessEnv, problems: string[]): StripeConfig | null {
  const secretKey = env.RENDERGATE_STRIPE_SECRET_KEY || '';
  const webhookSecret = env.RENDERGATE_STRIPE_WEBHOOK_SECRET || '';
  const rawAmounts = env.RENDERGATE_TOPUP_AMOUNTS || '1000,2000,5000,10000';
  const topupAmounts = [...new Set(rawAmounts.split(',').map((x) => Number(x.trim())))].sort(
    (a, b) => a - b,
  );
  // Stripe charges at least €0.50 and at most €999,999.99 per payment.
  if (
    topupAmounts.length > 20 ||
    topupAmounts.some((n) => !Number.isInteger(n) || n < 50 || n > 99_999_999)
  ) {
    problems.push(
      `RENDERGATE_TOPUP_AMOUNTS=${JSON.stringify(rawAmounts)}: comma-separated cents from 50 to 99999999, at most 20`,
    );
  }
  let api: StripeConfig['api'] = null;
  let checkoutOrigin = 'https://checkout.stripe.com';
  if (env.RENDERGATE_STRIPE_API_BASE) {
    try {
      const u = new URL(env.RENDERGATE_STRIPE_API_BASE);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
      const protocol = u.protocol === 'http:' ? 'http' : 'https';
      api = {
        host: u.hostname,
        port: Number(u.port || (protocol === 'http' ? 80 : 443)),
        protocol,
      };
      // A stand-in of Stripe serves its Checkout pages itself, on its own origin.
      checkoutOrigin = u.origin;
    } catch {
      problems.push('RENDERGATE_STRIPE_API_BASE: must be an absolute http(s) URL');
    }
  }
  if (!secretKey && !webhookSecret) return null;
  if (!secretKey || !webhookSecret) {
    problems.push(
      'RENDERGATE_STRIPE_SECRET_KEY and RENDERGATE_STRIPE_WEBHOOK_SECRET: set both, or neither',
    );
    return null;
  }
  if (!/^whsec_\S+$/.test(webhookSecret))
    problems.push('RENDERGATE_STRIPE_WEBHOOK_SECRET: must start with whsec_');
  // Stripe sends from a few addresses, a burst of events at most a few a second from each.
  const webhookPerMinute = envReader(env, problems).int(
    'RENDERGATE_STRIPE_WEBHOOK_REQUESTS_PER_MINUTE',
    600,
    0,
    1_000_000,
  );
  return { secretKey, webhookSecret, topupAmounts, api, checkoutOrigin, webhookPerMinute };
}
