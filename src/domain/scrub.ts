// Text that leaves the process (API answers, generation errors, logs, /readyz, /metrics) never carries a
// URL's userinfo (docs/api.md "Abuse limits", "Secrets"): `scheme://user:password@host` is shown as
// `scheme://host`, wherever it stands in the text. A request's own address is logged with its
// one-time token cut (docs/operations.md "Logs"): a link that works once must not work for whoever
// reads the log first.
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#\s@"'<>]*@/gi;

/** The text with the userinfo of every URL in it removed. */
export function stripUserinfo(text: string): string {
  return text.replace(USERINFO, '$1');
}

/** Whether a URL carries userinfo (a user name or a password). */
export function hasUserinfo(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.username !== '' || u.password !== '';
  } catch {
    return stripUserinfo(raw) !== raw;
  }
}

/**
 * Paths whose next segment is a one-time token (the studio's links, docs/studio.md): an invitation
 * and a password reset. A route that takes a token in its path adds its prefix here.
 */
export const ONE_TIME_LINK_PATHS = ['/invite/', '/reset/'] as const;

/** Query parameters that carry a credential or a one-time code. */
const TOKEN_PARAMS = [
  'token',
  'access_token',
  'id_token',
  'refresh_token',
  'code',
  'key',
  'api_key',
  'apikey',
  'secret',
  'password',
  'signature',
  'sig',
];
const LINK_PATH = new RegExp(
  `^(${ONE_TIME_LINK_PATHS.map((p) => p.replace(/\//g, '\\/')).join('|')})([^/?#]*)`,
  'i',
);
const TOKEN_PARAM = new RegExp(`([?&](?:${TOKEN_PARAMS.join('|')})=)([^&#]*)`, 'gi');
/** The same, to test with: a test is several times cheaper than a replace that finds nothing. */
const HAS_TOKEN_PARAM = new RegExp(`[?&](?:${TOKEN_PARAMS.join('|')})=`, 'i');
/** The first character of each path's prefix after its slash, lower and upper case, as codes. */
const LINK_FIRST = new Set(
  ONE_TIME_LINK_PATHS.flatMap((p) => [p.charCodeAt(1), p.toUpperCase().charCodeAt(1)]),
);

/** A token as a log shows it: its first 4 characters (enough to tell links apart), then `…`. */
const cut = (_m: string, head: string, token: string) =>
  token === '' ? head : `${head}${token.length > 8 ? token.slice(0, 4) : ''}…`;

/**
 * A request target (path and query) as a log may show it: the token of a one-time link and the
 * value of a credential in the query are cut. The same string when there is nothing to cut; cheap then
 * (the access line of every request goes through it).
 */
export function cutTokens(url: string): string {
  let out = url;
  if (LINK_FIRST.has(out.charCodeAt(1))) out = out.replace(LINK_PATH, cut);
  if (out.indexOf('?') >= 0 && HAS_TOKEN_PARAM.test(out)) out = out.replace(TOKEN_PARAM, cut);
  return out;
}
