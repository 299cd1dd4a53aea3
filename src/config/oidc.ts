// Single sign-on's variables (docs/operations.md "Single sign-on"): RENDERGATE_OIDC_ISSUER,
// RENDERGATE_OIDC_CLIENT_ID, RENDERGATE_OIDC_CLIENT_SECRET and RENDERGATE_OIDC_NAME.
export interface OidcConfig {
  /** The provider's issuer URL, as its discovery document names it. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Shown as "Sign in with <name>". */
  name: string;
  /** The issuer is http:// on a loopback address (a local provider, the tests): allowed. */
  plainHttp: boolean;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** The OIDC block; null without an issuer. Problems go to `problems`. */
export function oidcConfig(env: NodeJS.ProcessEnv, problems: string[]): OidcConfig | null {
  const issuer = (env.RENDERGATE_OIDC_ISSUER || '').replace(/\/+$/, '');
  const clientId = env.RENDERGATE_OIDC_CLIENT_ID || '';
  const clientSecret = env.RENDERGATE_OIDC_CLIENT_SECRET || '';
  const name = (env.RENDERGATE_OIDC_NAME || 'SSO').trim();
  if (!issuer && !clientId && !clientSecret) return null;
  if (!issuer || !clientId || !clientSecret) {
    problems.push(
      'RENDERGATE_OIDC_ISSUER, RENDERGATE_OIDC_CLIENT_ID and RENDERGATE_OIDC_CLIENT_SECRET: set all three, or none',
    );
    return null;
  }
  let plainHttp = false;
  try {
    const u = new URL(issuer);
    plainHttp = u.protocol === 'http:';
    if (u.protocol !== 'https:' && !(plainHttp && LOOPBACK.test(u.hostname))) throw new Error();
    if (u.search || u.hash) throw new Error();
  } catch {
    problems.push(
      `RENDERGATE_OIDC_ISSUER=${JSON.stringify(issuer)}: must be an https:// URL (http:// only on a loopback address)`,
    );
    return null;
  }
  if (name.length === 0 || name.length > 40)
    problems.push('RENDERGATE_OIDC_NAME: 1 to 40 characters');
  return { issuer, clientId, clientSecret, name, plainHttp };
}
