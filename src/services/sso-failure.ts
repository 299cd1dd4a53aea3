// Why a single sign-on failed, in words for the sign-in page (docs/studio.md "Single sign-on"):
// each of openid-client's failures mapped to one of a few reasons a person can act on. The
// provider's own words are never shown (they may echo what a forged callback carried).
import * as oidc from 'openid-client';

export type SsoReason =
  | 'state'
  | 'denied'
  | 'code'
  | 'token'
  | 'email'
  | 'unverified'
  | 'closed'
  | 'taken'
  | 'unreachable';

const MESSAGES: Record<SsoReason, string> = {
  state: 'This sign-in did not start here, took too long, or was finished already. Sign in again.',
  denied: 'The sign-in provider did not sign you in. Sign in again.',
  code:
    'The sign-in provider refused the sign-in code: it has expired or was used already. ' +
    'Sign in again.',
  token: "The sign-in provider's answer did not check out, so it was not trusted.",
  email: 'The sign-in provider did not give an email address for your account.',
  unverified:
    'The sign-in provider has not verified your email address. Verify it there, then sign in again.',
  closed:
    'There is no account here for your email, and sign-up is closed. Ask an owner to invite you.',
  taken: 'An account with your email was being made at the same moment. Sign in again.',
  unreachable: 'The sign-in provider could not be reached. Try again in a few minutes.',
};

export class SsoFailure extends Error {
  constructor(
    readonly reason: SsoReason,
    cause?: unknown,
  ) {
    super(MESSAGES[reason], { cause });
    this.name = 'SsoFailure';
  }

  /** The page's status: 503 while the provider is away, else 400 (403 for a refused person). */
  get status(): number {
    if (this.reason === 'unreachable') return 503;
    if (this.reason === 'closed' || this.reason === 'unverified') return 403;
    return 400;
  }
}

/** The failure of an error thrown by openid-client (or by fetch under it). */
export function ssoFailureOf(e: unknown): SsoFailure {
  if (e instanceof SsoFailure) return e;
  if (e instanceof oidc.AuthorizationResponseError) return new SsoFailure('denied', e);
  if (e instanceof oidc.ResponseBodyError)
    return new SsoFailure(e.error === 'invalid_grant' ? 'code' : 'token', e);
  if (e instanceof oidc.ClientError)
    return new SsoFailure(e.code?.startsWith('OAUTH_') ? 'token' : 'unreachable', e);
  return new SsoFailure('unreachable', e);
}
