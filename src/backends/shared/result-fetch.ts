// Result files a model server names by address (docs/api.md "Abuse limits", "Result files from
// backends"). An address on the server's own origin is fetched as it is: the operator configured that
// server. Any other address, and every redirect, goes through the address guard of input images
// (src/net/address-guard.ts, via backends/local/guarded-get.ts: every resolved address checked, the
// connection pinned to the checked one), at most 5 redirects. The body is streamed to the file under a
// byte limit; an unsuccessful answer's body is never read into an error.
import { createWriteStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RenderError } from '../types.ts';
import {
  anyAddressPolicy,
  publicAddressPolicy,
  type AddressPolicy,
} from '../../net/address-guard.ts';
import { bareHost, describeUrl, pickAddress, pinnedLookup } from '../local/guarded-get.ts';

export const RESULT_MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface ResultFetchOptions {
  file: string;
  limitBytes: number;
  signal: AbortSignal;
  /** The model server's own origin (`http://host:port`); null for hosted APIs whose files live elsewhere. */
  origin: string | null;
  allowPrivate: boolean;
  /** Test seam: the policy used when private addresses are not allowed. */
  policy?: AddressPolicy;
  /** Checks the answer's content type before its body is read; throws to refuse it. */
  checkType: (contentType: string) => void;
  tooLarge: () => RenderError;
  what: string;
}

const refused = (o: ResultFetchOptions, why: string, retryable = false) =>
  new RenderError(
    'BACKEND_BAD_RESPONSE',
    `The model server's result could not be fetched (${o.what}: ${why}).`,
    retryable,
  );

/** Downloads `source` into `o.file`; resolves when the whole body is written. */
export async function fetchResult(source: string, o: ResultFetchOptions): Promise<void> {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw refused(o, 'not a valid address');
  }
  const policy = o.allowPrivate ? anyAddressPolicy : (o.policy ?? publicAddressPolicy);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw refused(o, 'not an http(s) address');
    if (url.username || url.password) throw refused(o, 'an address with credentials');
    const own = o.origin !== null && url.origin === o.origin;
    let lookup;
    if (!own) {
      try {
        const target = await pickAddress(url, { policy, signal: o.signal });
        lookup = { lookup: pinnedLookup(target), family: target.family };
      } catch (e) {
        if (o.signal.aborted) throw e;
        const r = e as RenderError;
        throw refused(
          o,
          r.message.replace(/, which renders may not fetch\.$/, '').replace(/\.$/, ''),
          r.retryable,
        );
      }
    }
    const res = await request(url, lookup, o);
    const status = res.statusCode ?? 0;
    if (REDIRECTS.has(status) && res.headers.location) {
      res.destroy();
      if (hop >= RESULT_MAX_REDIRECTS)
        throw refused(o, `more than ${RESULT_MAX_REDIRECTS} redirects`);
      try {
        url = new URL(res.headers.location, url);
      } catch {
        throw refused(o, 'a redirect to an invalid address');
      }
      continue;
    }
    if (status < 200 || status > 299) {
      res.destroy(); // never read: its body is not shown to anyone
      const busy = status === 429 || status >= 500;
      throw new RenderError(
        busy ? 'BACKEND_UNAVAILABLE' : 'BACKEND_REJECTED',
        `The model server's result download failed (${o.what}: HTTP ${status}).`,
        busy,
      );
    }
    try {
      o.checkType(String(res.headers['content-type'] ?? ''));
      if (Number(res.headers['content-length'] ?? 0) > o.limitBytes) throw o.tooLarge();
    } catch (e) {
      res.destroy();
      throw e;
    }
    let seen = 0;
    const limit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        done(seen > o.limitBytes ? o.tooLarge() : null, chunk);
      },
    });
    try {
      await pipeline(res, limit, createWriteStream(o.file), { signal: o.signal });
    } catch (e) {
      if (e instanceof RenderError) throw e;
      if (o.signal.aborted)
        throw new RenderError('RENDER_ABORTED', 'The render was stopped.', true);
      throw refused(
        o,
        `the download broke off (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
        true,
      );
    }
    return;
  }
}

function request(
  url: URL,
  pinned: { lookup: ReturnType<typeof pinnedLookup>; family: 4 | 6 } | undefined,
  o: ResultFetchOptions,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (o.signal.aborted) {
      reject(new RenderError('RENDER_ABORTED', 'The render was stopped.', true));
      return;
    }
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request({
      protocol: url.protocol,
      hostname: bareHost(url),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      agent: false,
      maxHeaderSize: 16 * 1024,
      headers: { 'user-agent': 'Rendergate-Results/1', 'accept-encoding': 'identity' },
      ...(pinned ?? {}),
      signal: o.signal,
    });
    req.on('error', (e) => {
      if (o.signal.aborted)
        reject(new RenderError('RENDER_ABORTED', 'The render was stopped.', true));
      else
        reject(
          refused(
            o,
            `${describeUrl(url)} could not be reached (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
            true,
          ),
        );
    });
    req.on('response', resolve);
    req.end();
  });
}
