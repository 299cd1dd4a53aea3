// Single sign-on through an OpenID Provider (docs/studio.md "Single sign-on"), by openid-client
// (a certified relying party): authorization code flow with PKCE, `state` and `nonce`, the
// provider's metadata from discovery, the ID token checked by the library (signature, issuer,
// audience, expiry, nonce). The request under way is a row keyed by its state's hash and bound to
// the browser that started it (oidc_requests), used once by the callback. A verified `email`
// claim names the person: made at their first sign-in as sign-up would (or joining the accounts
// they were invited to, when sign-up is closed).
import crypto from 'node:crypto';
import * as oidc from 'openid-client';
import { transaction, type Db } from '../db/pool.ts';
import { insertOidcRequest, useOidcRequest } from '../db/sign-in-flows.ts';
import { personByEmail, personFor, setLastAccount } from '../db/people.ts';
import { accountToOpen } from '../db/studio-passwords.ts';
import { insertAccount } from '../db/accounts.ts';
import { ownerOf } from '../db/memberships.ts';
import { useInvitesOfEmail } from '../db/member-invites.ts';
import { newId } from '../domain/ids.ts';
import { memberPrincipal } from '../domain/principal.ts';
import { recordAudit, type AuditSource } from '../audit/record.ts';
import type { OidcConfig } from '../config/oidc.ts';
import { EMAIL, type SignedIn } from './passwords.ts';
import { joinAccount } from './members.ts';
import { SsoFailure, ssoFailureOf } from './sso-failure.ts';

/** A sign-in under way waits this long for its callback. */
export const REQUEST_TTL_S = 10 * 60;
/** Each request to the provider, at most (seconds). */
const PROVIDER_TIMEOUT_S = 10;

const sha = (s: string) => crypto.createHash('sha256').update(s).digest();

export { SsoFailure };

export class Sso {
  private discovered: Promise<oidc.Configuration> | null = null;

  constructor(
    private db: Db,
    private o: OidcConfig,
    private publicUrl: string,
    private signupOpen: boolean,
  ) {}

  get redirectUri() {
    return `${this.publicUrl}/auth/oidc/callback`;
  }

  /** The provider's metadata, read once; a failure is not kept, so the next sign-in asks again. */
  private configuration(): Promise<oidc.Configuration> {
    this.discovered ??= oidc
      .discovery(new URL(this.o.issuer), this.o.clientId, this.o.clientSecret, undefined, {
        timeout: PROVIDER_TIMEOUT_S,
        // http:// is allowed only for a loopback issuer (config/oidc.ts)
        execute: this.o.plainHttp ? [oidc.allowInsecureRequests] : [],
      })
      .catch((e: unknown) => {
        this.discovered = null;
        throw e;
      });
    return this.discovered;
  }

  /**
   * Starts a sign-in: the provider's authorization URL to send the browser to, and the secret
   * binding this request to the browser (its cookie). Throws SsoFailure when the provider cannot
   * be reached.
   */
  async start(next: string): Promise<{ url: string; browser: string }> {
    const config = await this.configuration().catch((e: unknown) => {
      throw ssoFailureOf(e);
    });
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const browser = crypto.randomBytes(32).toString('base64url');
    await insertOidcRequest(this.db, {
      stateHash: sha(state),
      browserHash: sha(browser),
      nonce,
      codeVerifier,
      next,
      seconds: REQUEST_TTL_S,
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: 'openid email',
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, browser };
  }

  /**
   * The callback: the request of its `state` used once (refused when unknown, replayed, expired or
   * started by another browser), the code exchanged and the ID token checked, then the person of
   * its verified email. Throws SsoFailure saying why, for the sign-in page.
   */
  async finish(
    callbackUrl: URL,
    browser: string | undefined,
    src: AuditSource,
  ): Promise<SignedIn & { next: string; first: boolean }> {
    const state = callbackUrl.searchParams.get('state');
    if (!state || !browser || state.length > 200 || browser.length > 100)
      throw new SsoFailure('state');
    const request = await useOidcRequest(this.db, sha(state), sha(browser));
    if (!request) throw new SsoFailure('state');
    let claims: Record<string, unknown> | undefined;
    try {
      const config = await this.configuration();
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: request.code_verifier,
        expectedState: state,
        expectedNonce: request.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      claims = idToken;
      // Many providers keep the scope's claims out of the ID token: then they are the
      // UserInfo's, for the same subject (the library checks `sub`).
      if (idToken.email === undefined)
        claims = await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
    } catch (e) {
      throw ssoFailureOf(e);
    }
    const email = typeof claims?.email === 'string' ? claims.email.trim() : '';
    if (!email || !EMAIL.test(email) || email.length > 254) throw new SsoFailure('email');
    if (claims?.email_verified !== true) throw new SsoFailure('unverified');
    const who = await this.personOf(email, src);
    return { ...who, next: request.next_path };
  }

  /** The person of a verified email, made at their first sign-in where they may be. */
  private async personOf(email: string, src: AuditSource): Promise<SignedIn & { first: boolean }> {
    const known = await personByEmail(this.db, email);
    if (known)
      return {
        personId: known.id,
        accountId: await accountToOpen(this.db, known.id),
        first: false,
      };
    return transaction(this.db, async (tx) => {
      if (this.signupOpen) {
        // as sign-up: an account of their own, which the accounts trigger makes them owner of
        const account = await insertAccount(tx, newId('acct'), email, null);
        const personId = account && (await ownerOf(tx, account.id));
        if (!account || !personId) throw new SsoFailure('taken');
        return { personId, accountId: account.id, first: true };
      }
      const invites = await useInvitesOfEmail(tx, email);
      if (invites.length === 0) throw new SsoFailure('closed');
      const person = await personFor(tx, newId('usr'), email);
      for (const i of invites) {
        if (!(await joinAccount(tx, i.account_id, person.id, i.role))) continue;
        await recordAudit(tx, {
          ...src,
          account: i.account_id,
          action: 'member.joined',
          actor: memberPrincipal(i.account_id, person.id, i.role),
          hints: { email: person.email },
          target: { type: 'member', id: person.id },
          details: { email: person.email, role: i.role, via: 'sso' },
        });
      }
      await setLastAccount(tx, person.id, invites[0].account_id);
      return { personId: person.id, accountId: invites[0].account_id, first: true };
    });
  }
}
