// A person's browser reduced to HTTP, for the studio's security and money tests: a cookie jar, the
// page's CSRF token, and our own Origin on every POST (as a browser sends it).
import { PASSWORD, uniqueEmail } from './helpers.ts';
import { fetchFrom } from '../helpers/fetch-from.ts';

export class StudioSession {
  cookies = new Map<string, string>();
  csrf = '';
  /** `from`: the loopback address the requests are sent from (127.0.0.1 when not given). */
  constructor(
    readonly base: string,
    readonly origin = base,
    readonly from?: string,
  ) {}

  private fetch(
    url: string,
    init: { method?: string; headers: Record<string, string>; body?: URLSearchParams },
  ) {
    return this.from
      ? fetchFrom(this.from, url, init)
      : fetch(url, { ...init, redirect: 'manual' });
  }

  private absorb(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(path: string, headers: Record<string, string> = {}) {
    const res = await this.fetch(this.base + path, {
      headers: { cookie: this.cookieHeader(), ...headers },
    });
    this.absorb(res);
    const text = await res.text();
    const m = /name="_csrf" value="([^"]+)"/.exec(text);
    if (m) this.csrf = m[1];
    return { status: res.status, headers: res.headers, text };
  }

  async post(
    path: string,
    form: Record<string, string | string[]>,
    o: { origin?: string | null; csrf?: string | null; headers?: Record<string, string> } = {},
  ) {
    const body = new URLSearchParams();
    const csrf = o.csrf === undefined ? this.csrf : o.csrf;
    if (csrf !== null) body.append('_csrf', csrf);
    for (const [k, v] of Object.entries(form))
      for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    const origin = o.origin === undefined ? this.origin : o.origin;
    const res = await this.fetch(this.base + path, {
      method: 'POST',
      body,
      headers: {
        cookie: this.cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
        ...(origin ? { origin } : {}),
        ...o.headers,
      },
    });
    this.absorb(res);
    return {
      status: res.status,
      headers: res.headers,
      text: await res.text(),
      location: res.headers.get('location'),
    };
  }

  /** Signs up a new account (sign-up must be open) and returns its email. */
  async signUp(email = uniqueEmail(), password = PASSWORD) {
    await this.get('/signup');
    const r = await this.post('/signup', { email, password });
    if (r.status !== 303) throw new Error(`sign-up answered ${r.status}: ${r.text.slice(0, 300)}`);
    await this.get('/');
    return email;
  }
}
