// The operator's commands against a running server's admin API (/admin/v1): RENDERGATE_URL names the
// server, RENDERGATE_ADMIN_TOKEN authenticates. Nothing local is read, so it works from any directory
// and any machine that reaches the server. The server makes the links, with its own public URL.
// The address is checked before the token is sent (remote-url.ts), and an answer that redirects is
// not followed: the admin API never redirects, so one is a wrong address, not a place for a token.
import { ApiError, type ErrorCode } from '../domain/errors.ts';
import { stripUserinfo } from '../domain/scrub.ts';
import type { AccountView } from '../services/accounts.ts';
import type { Page } from '../services/paging.ts';
import { CliError } from './cli-error.ts';
import type { OperatorApi } from './operator-api.ts';
import { adminBase } from './remote-url.ts';

const TIMEOUT_MS = 30_000;

export function remoteOperator(
  baseUrl: string,
  token: string | undefined,
  o: { insecure: boolean } = { insecure: false },
): OperatorApi {
  const base = adminBase(baseUrl, o);
  if (!token)
    throw new CliError(
      "RENDERGATE_URL is set, so RENDERGATE_ADMIN_TOKEN must be too (the server's admin token)",
    );
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const url = new URL(path, base);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        redirect: 'manual',
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      const why = (e as Error).cause ? String((e as Error).cause) : (e as Error).message;
      throw new CliError(`cannot reach ${url.origin}: ${stripUserinfo(why)}`);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const to = res.headers.get('location');
      const where = to ? ` to ${stripUserinfo(to)}` : '';
      throw new CliError(
        `${method} ${url.pathname}: HTTP ${res.status}, a redirect${where}, not followed; ` +
          "set RENDERGATE_URL to the server's own address",
      );
    }
    const text = await res.text();
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new CliError(
        `${method} ${url.pathname}: HTTP ${res.status} with a body that is not JSON (is RENDERGATE_URL the server's address?)`,
      );
    }
    if (!res.ok) {
      if (typeof json.code !== 'string')
        throw new CliError(`${method} ${url.pathname}: HTTP ${res.status}`);
      throw new ApiError(
        json.code as ErrorCode,
        String(json.message),
        json.details as unknown[] | undefined,
      );
    }
    return json as T;
  };
  const id = encodeURIComponent;
  const query = (q: Record<string, string | number | undefined>) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
    const s = p.toString();
    return s ? `?${s}` : '';
  };
  return {
    listAccounts: (o) =>
      call('GET', `accounts${query({ query: o.query, limit: o.limit, cursor: o.cursor })}`),
    account: async (idOrEmail) => {
      if (!idOrEmail.includes('@')) return call<AccountView>('GET', `accounts/${id(idOrEmail)}`);
      const page = await call<Page<AccountView>>('GET', `accounts${query({ email: idOrEmail })}`);
      if (!page.data[0])
        throw new ApiError('ACCOUNT_NOT_FOUND', `No account with the email ${idOrEmail}.`);
      return page.data[0];
    },
    createAccount: (email, name) => call('POST', 'accounts', { email, ...(name ? { name } : {}) }),
    invite: (email, name) => call('POST', 'invites', { email, ...(name ? { name } : {}) }),
    resetLink: (email) => call('POST', 'reset-links', { email }),
    addCredit: (acct, amountCents, reason) =>
      call('POST', `accounts/${id(acct)}/credits`, { amountCents, ...(reason ? { reason } : {}) }),
    createKey: (acct, o) =>
      call('POST', `accounts/${id(acct)}/keys`, {
        ...(o.name ? { name: o.name } : {}),
        dailyCapCents: o.dailyCapCents,
        ...(o.rateLimitPerMinute ? { rateLimitPerMinute: o.rateLimitPerMinute } : {}),
        ...(o.mode ? { mode: o.mode } : {}),
      }),
    revokeKey: (key) => call('DELETE', `keys/${id(key)}`),
    refund: (gen) => call('POST', `generations/${id(gen)}/refund`),
    listMembers: (acct) => call('GET', `accounts/${id(acct)}/members`),
    addMember: (acct, email, role) => call('POST', `accounts/${id(acct)}/members`, { email, role }),
    setMemberRole: (acct, user, role) =>
      call('PATCH', `accounts/${id(acct)}/members/${id(user)}`, { role }),
    removeMember: (acct, user, revokeKeys) =>
      call(
        'DELETE',
        `accounts/${id(acct)}/members/${id(user)}${query({ revokeKeys: String(revokeKeys) })}`,
      ),
    close: async () => {},
  };
}
