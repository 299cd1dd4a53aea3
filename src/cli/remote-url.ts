// RENDERGATE_URL, checked before the admin token goes anywhere (docs/operations.md "The command
// line"): an absolute http(s) address without a user name or password (the token is the admin API's
// only credential), and `https:` unless the server is this machine, so the token never crosses a
// network unencrypted without the operator saying so (`--insecure`). No message ever prints the
// address's userinfo: a mistyped URL may well hold a password.
import ipaddr from 'ipaddr.js';
import { stripUserinfo } from '../domain/scrub.ts';
import { CliError } from './cli-error.ts';

/** Whether `hostname` (as URL parses it) is this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost') return true;
  const bare = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare))
    return ipaddr.IPv4.parse(bare).range() === 'loopback';
  if (!ipaddr.IPv6.isValid(bare)) return false;
  const v6 = ipaddr.IPv6.parse(bare);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'loopback';
  return v6.range() === 'loopback';
}

/**
 * How an address is shown: an http(s) URL without its userinfo; anything else without what looks
 * like userinfo, and not at all if an `@` remains (`host:pw@x` is a URL of the scheme `host:`).
 */
function shown(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') {
      u.username = '';
      u.password = '';
      return JSON.stringify(u.href);
    }
  } catch {
    /* shown as it is below, if that is safe */
  }
  const safe = stripUserinfo(raw);
  return safe.includes('@') ? '(not shown: it holds an @)' : JSON.stringify(safe);
}

const refuse = (message: string) => new CliError(`rendergate: ${message}`, 2);

/** The admin API's base (`…/admin/v1/`) for RENDERGATE_URL; a CliError (exit 2) saying why not. */
export function adminBase(raw: string, o: { insecure: boolean }): URL {
  let base: URL;
  try {
    base = new URL(raw.replace(/\/*$/, '/') + 'admin/v1/');
  } catch {
    throw refuse(`RENDERGATE_URL=${shown(raw)} is not an absolute http(s) URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw refuse(`RENDERGATE_URL=${shown(raw)} is not an absolute http(s) URL`);
  if (base.username !== '' || base.password !== '')
    throw refuse(
      `RENDERGATE_URL=${shown(raw)} must not carry a user name or password ` +
        '(the admin token, from RENDERGATE_ADMIN_TOKEN, is the only credential sent)',
    );
  if (base.protocol === 'http:' && !isLoopbackHost(base.hostname) && !o.insecure)
    throw refuse(
      `RENDERGATE_URL=${shown(raw)} is plain http:// to another machine, which would send the ` +
        'admin token unencrypted; use https://, or pass --insecure to send it anyway',
    );
  return base;
}
