// Idempotency-Key: a Structured Field string and the bare token are the same key.
import { expect, it } from 'vitest';
import { idempotencyKeyOf } from '../../../src/web/idempotency-key.ts';

it('unquotes a Structured Field string and keeps a bare token', () => {
  expect(idempotencyKeyOf('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe(
    '8e03978e-40d5-43e8-bc93-6894a57f9324',
  );
  expect(idempotencyKeyOf('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe(
    '8e03978e-40d5-43e8-bc93-6894a57f9324',
  );
  expect(idempotencyKeyOf('"a\\"b\\\\c"')).toBe('a"b\\c');
  expect(idempotencyKeyOf('a"b')).toBe('a"b');
});

it('refuses what is no key', () => {
  for (const v of [
    undefined,
    '',
    '""',
    '"a b"',
    '"a"b"',
    'a b',
    'x'.repeat(256),
    `"${'x'.repeat(256)}"`,
    ['a', 'b'],
  ]) {
    expect(idempotencyKeyOf(v as never), String(v)).toBeUndefined();
  }
});
