// A browser's trip through single sign-on reduced to HTTP, for test/studio/sso.test.ts: from the
// studio's start link through the provider's redirects (its cookies kept apart, another origin) to
// the callback URL the provider sends the browser back to.
import { expect } from 'vitest';
import type { StudioSession } from './http-session.ts';

/** The provider's cookies, apart from the studio's (another origin). */
class Jar {
  private c = new Map<string, string>();
  header = () => [...this.c].map(([k, v]) => `${k}=${v}`).join('; ');
  absorb(res: Response) {
    for (const h of res.headers.getSetCookie()) {
      const [pair] = h.split(';');
      const eq = pair.indexOf('=');
      this.c.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
}

/**
 * Starts a sign-in in `s` (a session of the studio at `base`) and follows the provider at `issuer`
 * to the callback it sends back: that callback's path and query.
 */
export async function toCallback(s: StudioSession, issuer: string, base: string): Promise<string> {
  expect((await s.get('/signin?next=/keys')).text).toContain(
    'href="/auth/oidc/start?next=%2Fkeys"',
  );
  const started = await s.get('/auth/oidc/start?next=/keys');
  expect(started.status).toBe(303);
  let url = started.headers.get('location')!;
  expect(url.startsWith(issuer)).toBe(true);
  expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');
  const jar = new Jar();
  for (let i = 0; i < 10 && !url.startsWith(base); i++) {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.absorb(res);
    const loc = res.headers.get('location');
    if (!loc)
      throw new Error(`provider answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    url = new URL(loc, url).href;
  }
  expect(url.startsWith(`${base}/auth/oidc/callback?`)).toBe(true);
  return url.slice(base.length);
}
