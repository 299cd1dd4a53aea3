// A studio in a real Chromium with Stripe's stand-in (test/fakes/stripe.ts) set up and its events
// sent to the service, for the browser tests of Add credit and the billing pages. The fields are
// set before the file's tests run and closed after them.
import { afterAll, beforeAll } from 'vitest';
import type { Browser } from 'playwright-core';
import { freshDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { stripeFake, type StripeFake } from '../fakes/stripe.ts';

export interface StripeStudio {
  browser: Browser;
  dbh: Awaited<ReturnType<typeof freshDatabase>>;
  fake: StripeFake;
  svc: TestService;
}

export function stripeStudio(): StripeStudio {
  const s = {} as StripeStudio;
  beforeAll(async () => {
    s.browser = await launchBrowser();
    s.dbh = await freshDatabase();
    s.fake = await stripeFake();
    s.svc = await startTestService(s.dbh.url, {
      env: {
        RENDERGATE_STRIPE_SECRET_KEY: s.fake.secretKey,
        RENDERGATE_STRIPE_WEBHOOK_SECRET: s.fake.webhookSecret,
        RENDERGATE_STRIPE_API_BASE: s.fake.base,
        RENDERGATE_WORKER_CONCURRENCY: '0',
      },
    });
    s.fake.webhookUrl = `${s.svc.base}/webhooks/stripe`;
  });
  afterAll(async () => {
    await s.browser?.close();
    await s.svc?.stop();
    await s.fake?.close();
    await s.dbh?.drop();
  });
  return s;
}
