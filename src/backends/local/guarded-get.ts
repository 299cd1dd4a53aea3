// An HTTP(S) GET that can only reach addresses its policy allows. Each hop (the first request and every
// redirect) resolves the host, checks every resolved address, and connects to the checked address through
// a pinned `lookup`, so a DNS answer that changes between check and connect (rebinding) cannot be used.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { RenderError } from '../types.ts';
import { abortError, raceAbort, throwIfAborted } from './abort.ts';
import type { AddressPolicy } from '../../net/address-guard.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
/** Resolves a host name to its addresses. Injectable so tests can stand in for DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardedGetOptions {
  policy: AddressPolicy;
  maxBytes: number;
  maxRedirects: number;
  /** Aborts the whole exchange; its reason (a RenderError) is what gets thrown. */
  signal: AbortSignal;
  resolve?: Resolver;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'Rendergate-ImageFetcher/1';

export const defaultResolver: Resolver = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** How a URL appears in messages: scheme, host and path, never credentials or the query string. */
export function describeUrl(url: URL): string {
  const text = `${url.protocol}//${url.host}${url.pathname}`;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** Parses and vets an address given as input: http(s) only, no embedded credentials. */
export function parseInputUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RenderError('INPUT_URL_REFUSED', 'The input address is not a valid URL.', false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RenderError(
      'INPUT_URL_REFUSED',
      `Only http and https addresses can be fetched, not ${url.protocol}`,
      false,
    );
  }
  if (url.username || url.password) {
    throw new RenderError(
      'INPUT_URL_REFUSED',
      `${describeUrl(url)}: addresses with credentials are not fetched.`,
      false,
    );
  }
  return url;
}

/** GETs `start`, following at most `maxRedirects` redirects; answers the body of the final 2xx response. */
export async function guardedGet(
  start: URL,
  opts: GuardedGetOptions,
): Promise<{ body: Buffer; url: URL }> {
  let url = start;
  for (let hop = 0; ; hop++) {
    throwIfAborted(opts.signal);
    const target = await pickAddress(url, opts);
    const outcome = await exchange(url, target, opts);
    if (outcome.kind === 'body') return { body: outcome.body, url };
    if (hop >= opts.maxRedirects) {
      throw new RenderError(
        'INPUT_TOO_MANY_REDIRECTS',
        `${describeUrl(start)} redirected more than ${opts.maxRedirects} times.`,
        false,
      );
    }
    let next: URL;
    try {
      next = new URL(outcome.location, url);
    } catch {
      throw new RenderError(
        'INPUT_URL_REFUSED',
        `${describeUrl(url)} redirected to an invalid address.`,
        false,
      );
    }
    url = parseInputUrl(next.href);
  }
}

export async function pickAddress(
  url: URL,
  opts: Pick<GuardedGetOptions, 'policy' | 'signal' | 'resolve'>,
): Promise<ResolvedAddress> {
  const host = bareHost(url);
  const family = isIP(host);
  let addresses: ResolvedAddress[];
  if (family === 4 || family === 6) {
    addresses = [{ address: host, family }];
  } else {
    try {
      addresses = await raceAbort((opts.resolve ?? defaultResolver)(host), opts.signal);
    } catch (err) {
      if (err instanceof RenderError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') {
        throw new RenderError(
          'INPUT_NOT_FOUND',
          `The host of ${describeUrl(url)} does not exist.`,
          false,
          { cause: err },
        );
      }
      throw new RenderError(
        'INPUT_FETCH_FAILED',
        `Could not resolve the host of ${describeUrl(url)}.`,
        true,
        { cause: err },
      );
    }
  }
  if (addresses.length === 0) {
    throw new RenderError(
      'INPUT_NOT_FOUND',
      `The host of ${describeUrl(url)} has no address.`,
      false,
    );
  }
  // Every address must pass: a name that resolves to a public and a private address is refused whole.
  for (const a of addresses) {
    const verdict = opts.policy(a.address);
    if (!verdict.allowed) {
      throw new RenderError(
        'INPUT_URL_REFUSED',
        `${describeUrl(url)} resolves to ${verdict.reason}, which renders may not fetch.`,
        false,
      );
    }
  }
  return addresses[0];
}

export function bareHost(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

export function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return ((
    _hostname: string,
    options: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

type Outcome = { kind: 'body'; body: Buffer } | { kind: 'redirect'; location: string };

function exchange(url: URL, target: ResolvedAddress, opts: GuardedGetOptions): Promise<Outcome> {
  const where = describeUrl(url);
  return new Promise<Outcome>((resolve, reject) => {
    // An abort while the address was picked has already fired, and the listener added below never would.
    if (opts.signal.aborted) {
      reject(abortError(opts.signal));
      return;
    }
    let settled = false;
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request({
      protocol: url.protocol,
      hostname: bareHost(url),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      agent: false, // a fresh connection per hop: a pooled socket could lead to an address not checked now
      lookup: pinnedLookup(target),
      family: target.family,
      headers: {
        'user-agent': USER_AGENT,
        accept: 'image/*,*/*;q=0.5',
        'accept-encoding': 'identity',
      },
    });
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      opts.signal.removeEventListener('abort', onAbort);
      fn();
    };
    const fail = (err: RenderError) =>
      finish(() => {
        req.destroy();
        reject(err);
      });
    const onAbort = () => fail(abortError(opts.signal));
    opts.signal.addEventListener('abort', onAbort, { once: true });

    req.on('error', (err) => fail(networkError(err, where)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status) && res.headers.location) {
        res.resume();
        finish(() => {
          req.destroy();
          resolve({ kind: 'redirect', location: res.headers.location as string });
        });
        return;
      }
      if (status < 200 || status > 299) {
        res.resume();
        fail(statusError(status, where));
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        fail(tooLarge(where, opts.maxBytes));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) fail(tooLarge(where, opts.maxBytes));
        else chunks.push(chunk);
      });
      res.on('error', (err) => fail(networkError(err, where)));
      res.on('end', () => {
        if (res.complete)
          finish(() => resolve({ kind: 'body', body: Buffer.concat(chunks, size) }));
      });
      // A body cut short (the server closed or reset mid-way) ends in 'close' without a complete message.
      res.on('close', () => {
        if (!res.complete)
          fail(
            networkError(Object.assign(new Error('body cut short'), { code: 'ECONNRESET' }), where),
          );
      });
    });
    req.end();
  });
}

function tooLarge(where: string, maxBytes: number): RenderError {
  return new RenderError(
    'INPUT_TOO_LARGE',
    `${where} is larger than the limit of ${maxBytes} bytes.`,
    false,
  );
}

function statusError(status: number, where: string): RenderError {
  // 408 and 429 say "try later"; other 4xx are the address's own fault; 5xx are the server's.
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    return new RenderError('INPUT_FETCH_FAILED', `${where} answered HTTP ${status}.`, true);
  }
  if (status >= 300 && status < 400) {
    return new RenderError(
      'INPUT_NOT_FOUND',
      `${where} answered HTTP ${status} without a usable redirect.`,
      false,
    );
  }
  return new RenderError('INPUT_NOT_FOUND', `${where} answered HTTP ${status}.`, false);
}

const TLS_CODES = /^(CERT_|ERR_TLS_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

function networkError(err: Error, where: string): RenderError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (TLS_CODES.test(code)) {
    return new RenderError(
      'INPUT_TLS_INVALID',
      `${where}: the server's TLS certificate was not accepted (${code}).`,
      false,
      { cause: err },
    );
  }
  if (code.startsWith('HPE_')) {
    return new RenderError(
      'INPUT_BAD_RESPONSE',
      `${where}: the server sent an invalid HTTP response.`,
      false,
      { cause: err },
    );
  }
  const what =
    code === 'ECONNREFUSED'
      ? 'refused the connection'
      : code === 'ECONNRESET'
        ? 'reset the connection'
        : `could not be fetched${code ? ` (${code})` : ''}`;
  return new RenderError('INPUT_FETCH_FAILED', `${where} ${what}.`, true, { cause: err });
}
