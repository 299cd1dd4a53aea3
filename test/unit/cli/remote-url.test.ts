// Which RENDERGATE_URL the operator commands take without --insecure (src/cli/remote-url.ts): https
// anywhere, http only to this machine by any of its loopback names; never one with credentials, and
// no refusal prints them.
import { describe, expect, it } from 'vitest';
import { adminBase, isLoopbackHost } from '../../../src/cli/remote-url.ts';
import { CliError } from '../../../src/cli/cli-error.ts';

describe('loopback hosts', () => {
  it('are localhost, 127.0.0.0/8 and ::1 in the forms the URL parser gives', () => {
    const host = (url: string) => new URL(url).hostname;
    for (const url of [
      'http://localhost:8080',
      'http://LocalHost./',
      'http://127.0.0.1',
      'http://127.254.3.9',
      'http://127.1/',
      'http://0x7f000001/',
      'http://[::1]:8080',
      'http://[::ffff:127.0.0.1]/',
    ])
      expect(isLoopbackHost(host(url)), url).toBe(true);
    for (const url of [
      'http://0.0.0.0',
      'http://10.0.0.1',
      'http://128.0.0.1',
      'http://[::2]',
      'http://[::ffff:10.0.0.1]',
      'http://localhost.example.com',
      'http://mylocalhost',
      'http://rendergate.example.com',
    ])
      expect(isLoopbackHost(host(url)), url).toBe(false);
  });
});

describe('RENDERGATE_URL', () => {
  const refusal = (raw: string, insecure = false) => {
    try {
      adminBase(raw, { insecure });
    } catch (e) {
      expect(e).toBeInstanceOf(CliError);
      expect((e as CliError).exitCode).toBe(2);
      return (e as Error).message;
    }
    throw new Error(`${raw} was taken`);
  };

  it('gives the admin API base for https anywhere and http to this machine', () => {
    expect(adminBase('https://rg.example.com', { insecure: false }).href).toBe(
      'https://rg.example.com/admin/v1/',
    );
    expect(adminBase('http://127.0.0.1:8080///', { insecure: false }).href).toBe(
      'http://127.0.0.1:8080/admin/v1/',
    );
    expect(adminBase('http://rg.internal/base', { insecure: true }).href).toBe(
      'http://rg.internal/base/admin/v1/',
    );
  });

  it('refuses credentials, other schemes, plain http elsewhere; never prints a password', () => {
    const pw = 's3cret-Pa55';
    for (const raw of [
      `https://ops:${pw}@rg.example.com`,
      `https://:${pw}@rg.example.com`,
      `http://ops:${pw}@127.0.0.1:8080`,
      `ftp://ops:${pw}@rg.example.com`,
      `not a url ops:${pw}@host`,
      `rg.example.com:${pw}@x`,
    ]) {
      const message = refusal(raw, true);
      expect(message, raw).not.toContain(pw);
      expect(message.split('\n')).toHaveLength(1);
    }
    expect(refusal(`https://ops:${pw}@rg.example.com/x`)).toBe(
      'rendergate: RENDERGATE_URL="https://rg.example.com/x" must not carry a user name or ' +
        'password (the admin token, from RENDERGATE_ADMIN_TOKEN, is the only credential sent)',
    );
    expect(refusal('http://rg.example.com')).toMatch(
      /^rendergate: RENDERGATE_URL="http:\/\/rg\.example\.com\/" is plain http:\/\/ .*--insecure/,
    );
  });
});
