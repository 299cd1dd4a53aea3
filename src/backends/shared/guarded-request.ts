// A GET that can only reach addresses its policy allows, shared by input images (local/guarded-get.ts)
// and model servers' result files (shared/result-fetch.ts). Each hop (the first request and every
// redirect) resolves the host, checks every resolved address, and connects to the checked address
// through a pinned `lookup`, so a DNS answer that changes between check and connect (rebinding) cannot
// be used. The caller reads the final answer's body and names every failure in its own words.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { RenderError } from '../types.ts';
import { raceAbort } from '../local/abort.ts';
import type { AddressPolicy } from '../../net/address-guard.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
/** Resolves a host name to its addresses. Injectable so tests can stand in for DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export const defaultResolver: Resolver = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** How a URL appears in messages: scheme, host and path, never credentials or the query string. */
export function describeUrl(url: URL): string {
  const text = `${url.protocol}//${url.host}${url.pathname}`;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

export function bareHost(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** `url`'s host when it is an IP address itself (no lookup needed), else null. */
export function literalAddress(url: URL): ResolvedAddress | null {
  const host = bareHost(url);
  const family = isIP(host);
  return family === 4 || family === 6 ? { address: host, family } : null;
}

/** Every address `url`'s host stands for: itself when it is an IP address, else what it resolves to. */
export async function hostAddresses(
  url: URL,
  opts: { signal: AbortSignal; resolve?: Resolver },
): Promise<ResolvedAddress[]> {
  const literal = literalAddress(url);
  if (literal) return [literal];
  let addresses: ResolvedAddress[];
  try {
    addresses = await raceAbort((opts.resolve ?? defaultResolver)(bareHost(url)), opts.signal);
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
  if (addresses.length === 0) {
    throw new RenderError(
      'INPUT_NOT_FOUND',
      `The host of ${describeUrl(url)} has no address.`,
      false,
    );
  }
  return addresses;
}

/**
 * The guard's verdict on the addresses `url`'s host stands for: every one must pass the policy (a
 * name that resolves to a public and a private address is refused whole); the first is the one to
 * connect to. Also what a test render checks in place of a fetch (backends/local/input-check.ts).
 */
export function vetAddresses(
  url: URL,
  addresses: ResolvedAddress[],
  policy: AddressPolicy,
): ResolvedAddress {
  for (const a of addresses) {
    const verdict = policy(a.address);
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

/** The address `url` may be reached at: every address its host resolves to must pass the policy. */
export async function pickAddress(
  url: URL,
  opts: { policy: AddressPolicy; signal: AbortSignal; resolve?: Resolver },
): Promise<ResolvedAddress> {
  return vetAddresses(url, await hostAddresses(url, opts), opts.policy);
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

export interface GuardedOpenOptions {
  policy: AddressPolicy;
  /** Aborts the exchange: `fail.aborted()` is thrown. */
  signal: AbortSignal;
  resolve?: Resolver;
  maxRedirects: number;
  headers: http.OutgoingHttpHeaders;
  maxHeaderSize?: number;
  /** An address reached as it is, without the guard (a model server's own origin). */
  trusted?: (url: URL) => boolean;
  /** Vets a redirect's address, resolved against the one before; throws to refuse it. */
  vetRedirect: (next: URL) => URL;
  /** Each failure, in the caller's words. */
  fail: {
    aborted: () => Error;
    tooManyRedirects: () => Error;
    invalidRedirect: (from: URL) => Error;
    network: (err: NodeJS.ErrnoException, url: URL) => Error;
    /** The guard's refusal (pickAddress's RenderError); without it, thrown as it is. */
    refused?: (err: RenderError) => Error;
  };
}

/**
 * GETs `start`, following at most `maxRedirects` redirects, each hop's address checked and pinned.
 * Answers the first response that is not a redirect, its body unread: the caller reads or destroys it.
 */
export async function openGuarded(
  start: URL,
  o: GuardedOpenOptions,
): Promise<{ res: http.IncomingMessage; url: URL }> {
  let url = start;
  for (let hop = 0; ; hop++) {
    if (o.signal.aborted) throw o.fail.aborted();
    let pinned: ResolvedAddress | undefined;
    if (!o.trusted?.(url)) {
      try {
        pinned = await pickAddress(url, o);
      } catch (e) {
        if (o.signal.aborted || !o.fail.refused) throw e;
        throw o.fail.refused(e as RenderError);
      }
    }
    const res = await requestOnce(url, pinned, o);
    const status = res.statusCode ?? 0;
    if (!REDIRECTS.has(status) || !res.headers.location) return { res, url };
    res.destroy();
    if (hop >= o.maxRedirects) throw o.fail.tooManyRedirects();
    let next: URL;
    try {
      next = new URL(res.headers.location, url);
    } catch {
      throw o.fail.invalidRedirect(url);
    }
    url = o.vetRedirect(next);
  }
}

/** One request; resolves with its response (headers read, body not). */
function requestOnce(
  url: URL,
  pinned: ResolvedAddress | undefined,
  o: GuardedOpenOptions,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    // An abort while the address was picked has already fired, and the listener added below never would.
    if (o.signal.aborted) {
      reject(o.fail.aborted());
      return;
    }
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request({
      protocol: url.protocol,
      hostname: bareHost(url),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      agent: false, // a fresh connection per hop: a pooled socket could lead to an address not checked now
      ...(o.maxHeaderSize ? { maxHeaderSize: o.maxHeaderSize } : {}),
      ...(pinned ? { lookup: pinnedLookup(pinned), family: pinned.family } : {}),
      headers: o.headers,
    });
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      o.signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () =>
      settle(() => {
        req.destroy();
        reject(o.fail.aborted());
      });
    o.signal.addEventListener('abort', onAbort, { once: true });
    // Stays attached after the response: a socket error while the body is read ends here harmlessly.
    req.on('error', (err) => settle(() => reject(o.fail.network(err, url))));
    req.on('response', (res) => settle(() => resolve(res)));
    req.end();
  });
}
