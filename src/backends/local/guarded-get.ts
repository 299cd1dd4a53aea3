// An HTTP(S) GET of an input image that can only reach addresses its policy allows
// (shared/guarded-request.ts: every hop's address checked and pinned), its body read under a byte
// limit, and every failure named as an INPUT_* error.
import type http from 'node:http';
import { RenderError } from '../types.ts';
import { abortError } from './abort.ts';
import type { AddressPolicy } from '../../net/address-guard.ts';
import { describeUrl, openGuarded, type Resolver } from '../shared/guarded-request.ts';

export interface GuardedGetOptions {
  policy: AddressPolicy;
  maxBytes: number;
  maxRedirects: number;
  /** Aborts the whole exchange; its reason (a RenderError) is what gets thrown. */
  signal: AbortSignal;
  resolve?: Resolver;
}

const USER_AGENT = 'Rendergate-ImageFetcher/1';

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
  const { res, url } = await openGuarded(start, {
    ...opts,
    headers: {
      'user-agent': USER_AGENT,
      accept: 'image/*,*/*;q=0.5',
      'accept-encoding': 'identity',
    },
    vetRedirect: (next) => parseInputUrl(next.href),
    fail: {
      aborted: () => abortError(opts.signal),
      tooManyRedirects: () =>
        new RenderError(
          'INPUT_TOO_MANY_REDIRECTS',
          `${describeUrl(start)} redirected more than ${opts.maxRedirects} times.`,
          false,
        ),
      invalidRedirect: (from) =>
        new RenderError(
          'INPUT_URL_REFUSED',
          `${describeUrl(from)} redirected to an invalid address.`,
          false,
        ),
      network: (err, at) => networkError(err, describeUrl(at)),
    },
  });
  return { body: await readBody(res, describeUrl(url), opts), url };
}

/** The body of a 2xx answer, at most `maxBytes`; any other status is its INPUT_* error. */
function readBody(
  res: http.IncomingMessage,
  where: string,
  opts: Pick<GuardedGetOptions, 'maxBytes' | 'signal'>,
): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      opts.signal.removeEventListener('abort', onAbort);
      fn();
    };
    const fail = (err: RenderError) =>
      finish(() => {
        res.destroy();
        reject(err);
      });
    const onAbort = () => fail(abortError(opts.signal));
    if (opts.signal.aborted) return onAbort();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) return fail(statusError(status, where));
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > opts.maxBytes)
      return fail(tooLarge(where, opts.maxBytes));
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > opts.maxBytes) fail(tooLarge(where, opts.maxBytes));
      else chunks.push(chunk);
    });
    res.on('error', (err) => fail(networkError(err, where)));
    res.on('end', () => {
      if (res.complete) finish(() => resolve(Buffer.concat(chunks, size)));
    });
    // A body cut short (the server closed or reset mid-way) ends in 'close' without a complete message.
    res.on('close', () => {
      if (!res.complete)
        fail(
          networkError(Object.assign(new Error('body cut short'), { code: 'ECONNRESET' }), where),
        );
    });
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
