// A real headless Chromium for the studio's browser tests: the system's when CHROMIUM_PATH is set, else
// the one @sparticuz/chromium ships inside its npm package (unpacked to /tmp on first use), so a fresh
// machine needs no manual step.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Of @sparticuz/chromium's flags (made for AWS Lambda), those that would weaken what we test are left out. */
const DROPPED = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--single-process',
]);
const COMMON = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--mute-audio',
];

export async function launchBrowser(): Promise<Browser> {
  if (process.env.CHROMIUM_PATH)
    return chromium.launch({
      executablePath: process.env.CHROMIUM_PATH,
      args: COMMON,
      headless: true,
    });
  const packaged = (await import('@sparticuz/chromium')).default;
  const args = packaged.args.filter((a) => !DROPPED.has(a) && !a.startsWith('--disable-features='));
  return chromium.launch({
    executablePath: await packaged.executablePath(),
    args: [...args, ...COMMON],
    headless: true,
  });
}

/** A fresh browser profile (its own cookies) and a page in it, with confirm() dialogs accepted. */
export async function freshPage(
  browser: Browser,
  base: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: base, acceptDownloads: true });
  const page = await context.newPage();
  page.on('dialog', (d) => {
    void d.accept();
  });
  return { context, page };
}
