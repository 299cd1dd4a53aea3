// Steps of the studio's browser tests, done as a person would: by role and label.
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';

export const PASSWORD = 'correct horse battery';

export const uniqueEmail = () => `p-${Math.random().toString(36).slice(2, 10)}@example.test`;

export async function signUp(
  page: Page,
  email = uniqueEmail(),
  password = PASSWORD,
): Promise<string> {
  await page.goto('/signup');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText('Balance').waitFor();
  return email;
}

export async function signIn(page: Page, email: string, password = PASSWORD) {
  await page.goto('/signin');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export async function accountIdOf(
  db: { query: (q: string, v: unknown[]) => Promise<{ rows: { id: string }[] }> },
  email: string,
) {
  const { rows } = await db.query('SELECT id FROM accounts WHERE lower(email) = lower($1)', [
    email,
  ]);
  expect(rows).toHaveLength(1);
  return rows[0].id;
}

/** The page's checks: no sideways scroll, no serious or critical axe violation. */
export async function checkPage(page: Page, label: string) {
  const [scroll, width] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    window.innerWidth,
  ]);
  expect(scroll, `${label} is wider than the viewport`).toBeLessThanOrEqual(width);
  const axe = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'])
    .analyze();
  const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    label,
  ).toEqual([]);
}
