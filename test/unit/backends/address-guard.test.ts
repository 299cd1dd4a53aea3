import { describe, expect, it } from 'vitest';
import {
  anyAddressPolicy,
  literalAddressRefusal,
  publicAddressPolicy,
} from '../../../src/net/address-guard.ts';
import { parseInputUrl } from '../../../src/backends/local/guarded-get.ts';
import { describeUrl } from '../../../src/backends/shared/guarded-request.ts';
import { RenderError } from '../../../src/backends/types.ts';

const refused: Array<[string, RegExp]> = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['::1', /loopback/],
  ['0.0.0.0', /this network/],
  ['0.1.2.3', /this network/],
  ['::', /unspecified/],
  ['10.0.0.1', /private/],
  ['10.255.255.255', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['100.64.0.1', /carrier-grade/],
  ['100.127.255.255', /carrier-grade/],
  ['169.254.169.254', /link-local/],
  ['169.254.0.1', /link-local/],
  ['192.0.0.170', /IETF/],
  ['192.0.2.10', /documentation/],
  ['198.18.0.1', /benchmarking/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['255.255.255.255', /broadcast/],
  ['240.0.0.1', /reserved/],
  ['::ffff:127.0.0.1', /loopback.*IPv4-mapped/],
  ['::ffff:7f00:1', /loopback.*IPv4-mapped/],
  ['::ffff:10.0.0.1', /private.*IPv4-mapped/],
  ['::ffff:169.254.169.254', /link-local.*IPv4-mapped/],
  ['::7f00:1', /loopback.*IPv4-compatible/],
  ['::127.0.0.1', /loopback/],
  ['::ffff:0:127.0.0.1', /loopback.*IPv4-translated/],
  ['64:ff9b::7f00:1', /loopback.*NAT64/],
  ['64:ff9b::a9fe:a9fe', /link-local.*NAT64/],
  ['64:ff9b:1::1', /NAT64/],
  ['2002:7f00:1::1', /loopback.*6to4/],
  ['2002:c0a8:101::1', /private.*6to4/],
  ['2001:0:4136:e378::1', /Teredo/],
  ['2001:db8::1', /documentation/],
  ['fc00::1', /unique-local/],
  ['fd12:3456:789a::1', /unique-local/],
  ['fe80::1', /link-local/],
  ['fe80::1%eth0', /link-local/],
  ['fec0::1', /site-local/],
  ['ff02::1', /multicast/],
  ['100::1', /discard/],
  ['4000::1', /reserved/],
  ['127.1', /not a plain IP/],
  ['0x7f.0.0.1', /not a plain IP/],
  ['2130706433', /not a plain IP/],
  ['017700000001', /not a plain IP/],
  ['localhost', /not a plain IP/],
  ['', /not a plain IP/],
];

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '172.32.0.1',
  '100.128.0.1',
  '192.169.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '[2606:4700:4700::1111]',
];

describe('publicAddressPolicy', () => {
  it.each(refused)('refuses %s', (address, reason) => {
    const verdict = publicAddressPolicy(address);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.reason).toMatch(reason);
  });

  it.each(allowed)('allows the public address %s', (address) => {
    expect(publicAddressPolicy(address)).toEqual({ allowed: true });
  });

  it('is lifted entirely by the allow-everything policy', () => {
    expect(anyAddressPolicy('127.0.0.1')).toEqual({ allowed: true });
  });
});

describe('literalAddressRefusal', () => {
  // What the URL parser leaves of a host decides: odd IPv4 forms become dotted quads, IPv6 stays
  // bracketed, and a name (even one ending in digits that are not an address) is left to the fetch.
  it.each([
    ['http://127.0.0.1/x.png', /loopback/],
    ['http://127.1/x.png', /loopback/],
    ['http://0x7f.1/x.png', /loopback/],
    ['http://2130706433/x.png', /loopback/],
    ['https://10.0.0.7:8443/x', /private/],
    ['http://[::1]/x', /loopback/],
    ['http://[::ffff:127.0.0.1]/x', /loopback/],
    ['http://169.254.169.254/latest/meta-data', /link-local/],
  ])('refuses %s when it is given', (url, reason) => {
    expect(literalAddressRefusal(url)).toMatch(reason);
  });

  it.each([
    'https://images.example.com/a.png',
    'http://localhost/x',
    'http://host-10.0.0.1.example/x',
    'http://8.8.8.8/x',
    'http://1.2.3/x',
    'http://[2001:4860:4860::8888]/x',
    'not a url',
  ])('leaves %s to the fetch', (url) => {
    expect(literalAddressRefusal(url)).toBeUndefined();
  });
});

describe('input URLs', () => {
  // The fetcher relies on the WHATWG parser to turn odd IPv4 notations into dotted quads before DNS.
  it.each([
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0x7f.0.0.1/', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ])('normalises %s to %s, which the policy refuses', (raw, host) => {
    const url = parseInputUrl(raw);
    expect(url.hostname).toBe(host);
    expect(publicAddressPolicy(url.hostname).allowed).toBe(false);
  });

  it.each([
    'file:///etc/passwd',
    'ftp://example.com/a.png',
    'gopher://example.com/',
    'data:image/png;base64,AAAA',
    'not a url',
  ])('refuses %s before any network access', (raw) => {
    const err = (() => {
      try {
        parseInputUrl(raw);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).code).toBe('INPUT_URL_REFUSED');
    expect((err as RenderError).retryable).toBe(false);
  });

  it('refuses credentials in the address without echoing them', () => {
    try {
      parseInputUrl('http://user:hunter2@example.com/a.png');
      expect.unreachable();
    } catch (e) {
      expect((e as RenderError).code).toBe('INPUT_URL_REFUSED');
      expect((e as Error).message).not.toContain('hunter2');
    }
  });

  it('describes an address by host and path, never its query string', () => {
    const text = describeUrl(
      new URL('https://cdn.example.com:8443/img/a.png?X-Amz-Signature=secret#frag'),
    );
    expect(text).toBe('https://cdn.example.com:8443/img/a.png');
  });
});
