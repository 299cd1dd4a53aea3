// A model server's result file into the render's scratch directory (then storage, by the worker),
// streamed with a size limit and checked against the model's declared output type (docs/backends.md
// "What every driver shares": a file of another type fails the render, refunded). Results come as
// `data:` URLs (Cog's default) or as http(s) addresses (Cog with --upload-url, ComfyUI /view, Replicate,
// fal). An address on the model server's own origin is fetched as it is; any other goes through the
// address guard of client-given image URLs, redirect by redirect (result-fetch.ts).
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { RenderError, type RenderOutput } from '../types.ts';
import type { CallOptions } from './http.ts';
import { deadline } from './deadline.ts';
import { fetchResult } from './result-fetch.ts';
import type { AddressPolicy } from '../../net/address-guard.ts';

export interface OutputOptions extends CallOptions {
  workDir: string;
  contentType: string;
  limitBytes: number;
  /** The model server's own origin: its result addresses are fetched as they are (result-fetch.ts). */
  origin: string | null;
  /** RENDERGATE_ALLOW_PRIVATE_URLS: result addresses elsewhere may be private too. */
  allowPrivate: boolean;
  /** Test seam: the address policy when private addresses are not allowed. */
  policy?: AddressPolicy;
}

const baseType = (t: string | null) => (t ?? '').split(';')[0].trim().toLowerCase();

function checkType(got: string, o: OutputOptions): void {
  if (baseType(got) !== baseType(o.contentType)) {
    throw new RenderError(
      'OUTPUT_WRONG_TYPE',
      `The model server sent ${baseType(got) || 'a file of no type'}, not ${o.contentType} as the model promises.`,
      false,
    );
  }
}

const tooLarge = (o: OutputOptions) =>
  new RenderError(
    'OUTPUT_TOO_LARGE',
    `The model server's result is larger than ${o.limitBytes} bytes.`,
    false,
  );

/** Saves the result named by `source` (data: or http(s) URL); the file output for the worker to store. */
export async function saveOutput(
  source: string,
  o: OutputOptions,
): Promise<Extract<RenderOutput, { kind: 'file' }>> {
  const file = path.join(o.workDir, 'output');
  if (source.startsWith('data:')) {
    const m = /^data:([^;,]*)((?:;[^;,]*)*),/.exec(source.slice(0, 512));
    if (!m)
      throw new RenderError(
        'BACKEND_BAD_RESPONSE',
        'The model server sent a malformed data URL.',
        true,
      );
    checkType(m[1], o);
    const payload = source.slice(m[0].length);
    const base64 = m[2].split(';').includes('base64');
    if ((base64 ? payload.length * 0.75 : payload.length) > o.limitBytes + 3) throw tooLarge(o);
    const bytes = base64
      ? Buffer.from(payload, 'base64')
      : Buffer.from(decodeURIComponent(payload), 'utf8');
    if (bytes.length > o.limitBytes) throw tooLarge(o);
    await writeFile(file, bytes);
    return { kind: 'file', path: file, contentType: o.contentType };
  }
  if (!/^https?:\/\//i.test(source))
    throw new RenderError(
      'BACKEND_BAD_RESPONSE',
      'The model server named its result with neither a data: nor an http(s) URL.',
      true,
    );
  const d = deadline(o.signal, o.timeoutMs);
  try {
    await fetchResult(source, {
      file,
      limitBytes: o.limitBytes,
      signal: d.signal,
      origin: o.origin,
      allowPrivate: o.allowPrivate,
      checkType: (t) => checkType(t, o),
      tooLarge: () => tooLarge(o),
      what: `${o.what} result download`,
      ...(o.policy ? { policy: o.policy } : {}),
    });
  } catch (e) {
    if (d.timedOut() && !o.signal.aborted)
      throw new RenderError(
        'BACKEND_TIMEOUT',
        `The model server did not send its result in time (${o.what}).`,
        true,
      );
    throw e;
  } finally {
    d.clear();
  }
  return { kind: 'file', path: file, contentType: o.contentType };
}

/**
 * The input with each upload address of the render's account (docs/api.md "Uploads") replaced by its
 * bytes as a data URL: a remote model server cannot fetch our upload URLs (they need the account's key).
 */
export async function inlineUploads(
  input: Record<string, unknown>,
  readUpload: (url: string) => Promise<{ bytes: Buffer; contentType: string } | null>,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    const upload = typeof v === 'string' && /^https?:\/\//.test(v) ? await readUpload(v) : null;
    out[k] = upload ? `data:${upload.contentType};base64,${upload.bytes.toString('base64')}` : v;
  }
  return out;
}

/** The last tqdm progress in a log ("  40%|████      | 4/10 [00:01<00:02]"), as 0..1; null when none. */
export function tqdmProgress(logs: string): number | null {
  let last: number | null = null;
  for (const m of logs.matchAll(/(?:^|[\r\n])[^\r\n]*?(\d{1,3})%\|[^|\r\n]*\|\s*(\d+)\/(\d+)/g)) {
    const total = Number(m[3]);
    last = total > 0 ? Math.min(1, Number(m[2]) / total) : Number(m[1]) / 100;
  }
  return last;
}
