// The billing variables (src/config/billing.ts) and how the studio reads euros and names a
// payment: each bad value is reported by name, defaults hold, an address splits into lines.
import { describe, expect, it } from 'vitest';
import { billingConfig } from '../../src/config/billing.ts';
import { euroCents } from '../../src/studio/routes/auto-recharge.ts';
import { howPaid } from '../../src/services/receipt-pdf.ts';

describe('billing configuration', () => {
  it('has defaults', () => {
    const problems: string[] = [];
    expect(billingConfig({}, problems)).toEqual({
      operatorName: 'Rendergate',
      operatorAddress: [],
      autoRechargePerDay: 3,
      creditHelp: null,
      signupCreditCents: 0,
    });
    expect(problems).toEqual([]);
  });

  it('reads the address as lines and refuses bad values by name', () => {
    const problems: string[] = [];
    const c = billingConfig(
      {
        RENDERGATE_OPERATOR_NAME: 'Example GmbH',
        RENDERGATE_OPERATOR_ADDRESS: 'Hauptstraße 1\\n10115 Berlin | Germany',
        RENDERGATE_AUTO_RECHARGE_PER_DAY: '0',
        RENDERGATE_SIGNUP_CREDIT_CENTS: '-5',
        RENDERGATE_CREDIT_HELP: 'bell\u0007',
      },
      problems,
    );
    expect(c.operatorAddress).toEqual(['Hauptstraße 1', '10115 Berlin', 'Germany']);
    expect(problems.map((p) => p.split(/[=:]/)[0]).sort()).toEqual([
      'RENDERGATE_AUTO_RECHARGE_PER_DAY',
      'RENDERGATE_CREDIT_HELP',
      'RENDERGATE_SIGNUP_CREDIT_CENTS',
    ]);
  });
});

describe('euros typed in a form', () => {
  it('reads cents, and nothing else', () => {
    expect(euroCents('5')).toBe(500);
    expect(euroCents('5.5')).toBe(550);
    expect(euroCents('5,05')).toBe(505);
    for (const bad of ['', '-1', '1e3', '5.555', 'five', '99999999'])
      expect(euroCents(bad)).toBeNaN();
  });
});

describe('how a receipt says it was paid', () => {
  it('names the way from the ledger reason', () => {
    expect(howPaid({ series: 'R', reason: 'Stripe Checkout cs_1' })).toContain('Checkout');
    expect(howPaid({ series: 'R', reason: 'Stripe auto-recharge pi_1' })).toContain(
      'auto-recharge',
    );
    expect(howPaid({ series: 'R', reason: null })).toBe('Credit from the operator');
    expect(howPaid({ series: 'CN', reason: 'Stripe refund of Checkout cs_1' })).toMatch(
      /^Returned/,
    );
  });
});
