// Single sign-on's variables (docs/operations.md "Single sign-on"): all three or none, the issuer
// https:// or http:// on a loopback address only, the button's name defaulting to SSO.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

const withOidc = (env: Record<string, string>) => () => loadConfig({ ...env });
const three = {
  RENDERGATE_OIDC_CLIENT_ID: 'rendergate',
  RENDERGATE_OIDC_CLIENT_SECRET: 'a secret',
};

describe('RENDERGATE_OIDC_*', () => {
  it('is off without them, and named SSO by default', () => {
    expect(loadConfig({}).oidc).toBeNull();
    const c = loadConfig({ ...three, RENDERGATE_OIDC_ISSUER: 'https://id.example.com/' });
    expect(c.oidc).toEqual({
      issuer: 'https://id.example.com',
      clientId: 'rendergate',
      clientSecret: 'a secret',
      name: 'SSO',
      plainHttp: false,
    });
  });

  it('allows http:// only on a loopback address', () => {
    for (const issuer of [
      'http://127.0.0.1:9000',
      'http://localhost:9000/realms/x',
      'http://[::1]',
    ])
      expect(loadConfig({ ...three, RENDERGATE_OIDC_ISSUER: issuer }).oidc?.plainHttp).toBe(true);
    for (const issuer of ['http://id.example.com', 'ftp://127.0.0.1', 'not a url'])
      expect(withOidc({ ...three, RENDERGATE_OIDC_ISSUER: issuer })).toThrow(
        /RENDERGATE_OIDC_ISSUER=.*https:\/\//,
      );
  });

  it('refuses one without the others', () => {
    expect(withOidc({ RENDERGATE_OIDC_ISSUER: 'https://id.example.com' })).toThrow(ConfigError);
    expect(withOidc({ RENDERGATE_OIDC_CLIENT_ID: 'x' })).toThrow(/set all three, or none/);
  });
});
