// Result files a model server names by address (docs/api.md "Abuse limits", "Result files from
// backends"). An address on the server's own origin is fetched as it is: the operator configured that
// server. Any other address, and every redirect, goes through the address guard of input images
// (src/net/address-guard.ts, via shared/guarded-request.ts: every resolved address checked, the
// connection pinned to the checked one), at most 5 redirects. The body is streamed to the file under a
// byte limit; an unsuccessful answer's body is never read into an error.
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RenderError } from '../types.ts';
import {
  anyAddressPolicy,
  publicAddressPolicy,
  type AddressPolicy,
} from '../../net/address-guard.ts';
import { describeUrl, openGuarded } from './guarded-request.ts';

export const RESULT_MAX_REDIRECTS = 5;

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

const aborted = () => new RenderError('RENDER_ABORTED', 'The render was stopped.', true);

/** An address a result may come from: http(s), no credentials. */
function vet(url: URL, o: ResultFetchOptions): URL {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refused(o, 'not an http(s) address');
  if (url.username || url.password) throw refused(o, 'an address with credentials');
  return url;
}

/** Downloads `source` into `o.file`; resolves when the whole body is written. */
export async function fetchResult(source: string, o: ResultFetchOptions): Promise<void> {
  let start: URL;
  try {
    start = new URL(source);
  } catch {
    throw refused(o, 'not a valid address');
  }
  const { res } = await openGuarded(vet(start, o), {
    policy: o.allowPrivate ? anyAddressPolicy : (o.policy ?? publicAddressPolicy),
    signal: o.signal,
    maxRedirects: RESULT_MAX_REDIRECTS,
    maxHeaderSize: 16 * 1024,
    headers: { 'user-agent': 'Rendergate-Results/1', 'accept-encoding': 'identity' },
    trusted: (url) => o.origin !== null && url.origin === o.origin,
    vetRedirect: (next) => vet(next, o),
    fail: {
      aborted,
      tooManyRedirects: () => refused(o, `more than ${RESULT_MAX_REDIRECTS} redirects`),
      invalidRedirect: () => refused(o, 'a redirect to an invalid address'),
      network: (e, url) =>
        refused(o, `${describeUrl(url)} could not be reached (${e.code ?? 'error'})`, true),
      refused: (r) =>
        refused(
          o,
          r.message.replace(/, which renders may not fetch\.$/, '').replace(/\.$/, ''),
          r.retryable,
        ),
    },
  });
  const status = res.statusCode ?? 0;
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
    if (o.signal.aborted) throw aborted();
    throw refused(
      o,
      `the download broke off (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      true,
    );
  }
}
