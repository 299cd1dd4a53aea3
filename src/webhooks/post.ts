// One webhook POST under the same address guard as renders' image fetches (src/net/address-guard.ts):
// every address the host resolves to must pass, and the connection goes to the checked address through a
// pinned lookup, so a DNS answer that changes between the check and the connect cannot be used.
// Redirects are not followed (a 3xx is a failed attempt, as Standard Webhooks senders do).
// Bounded by construction (docs/api.md "Abuse limits"): one deadline covers the whole attempt (DNS,
// connect, TLS, send, status line, headers and body); at most `maxBodyBytes` of the answer are read,
// then the socket is destroyed; whatever happens, the socket is destroyed when the attempt settles.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { AddressPolicy } from '../net/address-guard.ts';

/** `status` when the receiver answered; `error` (one sentence, for `lastError`) when it did not. */
export type PostOutcome = { status: number } | { error: string };

/** Bytes of a receiver's answer read at most; the rest is never read (the socket is closed). */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** Bytes of a receiver's status line and headers, at most (Node's parser refuses more). */
const MAX_HEADER_BYTES = 16 * 1024;

interface Target {
  address: string;
  family: 4 | 6;
}

async function pick(url: URL, policy: AddressPolicy): Promise<Target | string> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const family = isIP(host);
  let found: Target[];
  if (family === 4 || family === 6) found = [{ address: host, family }];
  else {
    try {
      found = (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({
        address: a.address,
        family: a.family === 6 ? 6 : 4,
      }));
    } catch (e) {
      return `the host could not be resolved (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
    }
  }
  if (found.length === 0) return 'the host has no address';
  for (const a of found) {
    const v = policy(a.address);
    if (!v.allowed) return `address refused: ${a.address} is ${v.reason}`;
  }
  return found[0];
}

export interface PostOptions {
  policy: AddressPolicy;
  /** The whole attempt, from the DNS lookup to the last byte read. */
  timeoutMs: number;
  maxBodyBytes?: number;
  userAgent?: string;
}

export async function guardedPost(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
): Promise<PostOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { error: 'not a valid URL' };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    return { error: 'not an http(s) URL without credentials' };
  }
  const timeout = `no answer within ${Math.round(opts.timeoutMs / 1000)} s`;
  let dnsTimer: NodeJS.Timeout | undefined;
  const deadline = Date.now() + opts.timeoutMs;
  const target = await Promise.race([
    pick(url, opts.policy),
    new Promise<string>((r) => {
      dnsTimer = setTimeout(() => r(timeout), opts.timeoutMs);
    }),
  ]).finally(() => clearTimeout(dnsTimer));
  if (typeof target === 'string') return { error: target };
  return send(
    url,
    target,
    body,
    headers,
    { ...opts, timeoutMs: Math.max(1, deadline - Date.now()) },
    timeout,
  );
}

function send(
  url: URL,
  target: Target,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
  timeoutText: string,
): Promise<PostOutcome> {
  const lookup = ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (o?.all) cb(null, [target]);
    else cb(null, target.address, target.family);
  }) as unknown as LookupFunction;
  const limit = opts.maxBodyBytes ?? MAX_ANSWER_BYTES;
  return new Promise<PostOutcome>((resolve) => {
    const mod = url.protocol === 'https:' ? https : http;
    let done = false;
    let status: number | null = null;
    const req = mod.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      agent: false,
      lookup,
      family: target.family,
      maxHeaderSize: MAX_HEADER_BYTES,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': opts.userAgent ?? 'Rendergate-Webhooks/1',
        connection: 'close',
      },
    });
    // Settles once; the socket goes with it, whether the answer was read to its end or not.
    const finish = (o: PostOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(o);
    };
    // A receiver that answered its status and then dripped its body past the deadline did answer.
    const timer = setTimeout(
      () => finish(status === null ? { error: timeoutText } : { status }),
      opts.timeoutMs,
    );
    req.on('error', (e) =>
      finish(
        status === null
          ? { error: `the connection failed (${(e as NodeJS.ErrnoException).code ?? e.message})` }
          : { status },
      ),
    );
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      let seen = 0;
      // The body is not used: it is read (so a small answer ends cleanly) up to the limit, then dropped.
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen >= limit) finish({ status: status! });
      });
      res.on('end', () => finish({ status: status! }));
      res.on('error', () => finish({ status: status! }));
      res.on('aborted', () => finish({ status: status! }));
    });
    req.end(body);
  });
}
