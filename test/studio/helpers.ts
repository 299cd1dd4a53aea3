// Steps of the studio's browser tests, done as a person would: by role and label.
import { expect } from 'vitest';
import type { Page } from 'playwright-core';

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
