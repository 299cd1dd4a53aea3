// Text that leaves the process (API answers, generation errors, logs, /readyz, /metrics) never carries a
// URL's userinfo (docs/api.md "Abuse limits", "Secrets"): `scheme://user:password@host` is shown as
// `scheme://host`, wherever it stands in the text.
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
