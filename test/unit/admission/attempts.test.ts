// Addresses as the studio's attempt limits count them: an IPv6 host is its /64.
import { expect, it } from 'vitest';
import { addressKey } from '../../../src/admission/address.ts';
import { limitsOf } from '../../../src/admission/attempts.ts';

it('counts IPv4 as it is and IPv6 by its /64', () => {
  expect(addressKey('127.0.0.2')).toBe('127.0.0.2');
  expect(addressKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
  expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
  expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
  expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
  expect(addressKey('::1')).toBe('0:0:0:0::/64');
  expect(
    limitsOf({ kind: 'signin', ip: '2001:db8:1:2::7', email: ' Ann@Example.TEST ' }).map(
      (l) => l.scope,
    ),
  ).toEqual([
    'signin-ip:2001:db8:1:2::/64',
    'signin-pair:2001:db8:1:2::/64|ann@example.test',
    'signin-email:ann@example.test',
  ]);
});
