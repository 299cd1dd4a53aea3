// One webhook POST under the same address guard as renders' image fetches (src/net/address-guard.ts):
// every address the host resolves to must pass, and the connection goes to the checked address through a
// pinned lookup, so a DNS answer that changes between the check and the connect cannot be used.
// Redirects are not followed (a 3xx is a failed attempt, as Standard Webhooks senders do).
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { AddressPolicy } from '../net/address-guard.ts';

export type PostOutcome = { status: number } | { error: string };

interface Target { address: string; family: 4 | 6 }

async function pick(url: URL, policy: AddressPolicy): Promise<Target | string> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const family = isIP(host);
  let found: Target[];
  if (family === 4 || family === 6) found = [{ address: host, family }];
  else {
    try {
      found = (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    } catch (e) {
      return `the host could not be resolved (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
    }
  }
  if (found.length === 0) return 'the host has no address';
  for (const a of found) {
    const v = policy(a.address);
    if (!v.allowed) return `the address resolves to ${v.reason}, which webhooks may not reach`;
  }
  return found[0];
}

export async function guardedPost(rawUrl: string, body: string, headers: Record<string, string>,
  opts: { policy: AddressPolicy; timeoutMs: number; userAgent?: string }): Promise<PostOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { error: 'not a valid URL' };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return { error: 'not an http(s) URL without credentials' };
  const target = await pick(url, opts.policy);
  if (typeof target === 'string') return { error: target };
  const lookup = ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (o?.all) cb(null, [target]);
    else cb(null, target.address, target.family);
  }) as unknown as LookupFunction;
  return new Promise<PostOutcome>((resolve) => {
    const mod = url.protocol === 'https:' ? https : http;
    let done = false;
    const finish = (o: PostOutcome) => { if (!done) { done = true; clearTimeout(timer); resolve(o); } };
    const req = mod.request({
      protocol: url.protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port || undefined,
      path: `${url.pathname}${url.search}`, method: 'POST', agent: false, lookup, family: target.family,
      headers: {
        ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)),
        'user-agent': opts.userAgent ?? 'Rendergate-Webhooks/1',
      },
    });
    const timer = setTimeout(() => { finish({ error: `no answer within ${opts.timeoutMs / 1000} s` }); req.destroy(); }, opts.timeoutMs);
    req.on('error', (e) => finish({ error: `the connection failed (${(e as NodeJS.ErrnoException).code ?? e.message})` }));
    req.on('response', (res) => {
      finish({ status: res.statusCode ?? 0 });
      res.resume(); // the answer's body is not used; read it so the connection can close cleanly
      res.on('error', () => undefined);
    });
    req.end(body);
  });
}
