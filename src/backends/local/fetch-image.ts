// Fetches an image given as a `url` input, under the address guard and size and time limits, and
// writes it into the render's work directory as a normalised PNG (EXIF orientation applied).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import sharp, { type Metadata } from 'sharp';
import { RenderError } from '../types.ts';
import { deadline } from './abort.ts';
import {
  anyAddressPolicy,
  publicAddressPolicy,
  type AddressPolicy,
} from '../../net/address-guard.ts';
import { guardedGet, parseInputUrl } from './guarded-get.ts';
import { describeUrl, type Resolver } from '../shared/guarded-request.ts';
import { MAX_INPUT_PIXELS } from '../../domain/limits.ts';

export interface FetchImageOptions {
  /** Where the normalised image is written. */
  workDir: string;
  /** Lift the address check (RENDERGATE_ALLOW_PRIVATE_URLS=1); every other limit still applies. */
  allowPrivate?: boolean;
  /** Largest body accepted, in bytes (default 20 MiB). */
  maxBytes?: number;
  /** Time for the whole fetch, redirects included (default 30 s). */
  timeoutMs?: number;
  /** Redirects followed before giving up (default 3). */
  maxRedirects?: number;
  /** Largest decoded image, in pixels (default 40 M). */
  maxPixels?: number;
  /** Longest side of the written image; larger images are scaled down (default 4096). */
  maxDimension?: number;
  /** The caller's cancellation; its reason (if a RenderError) is what the fetch rejects with. */
  signal?: AbortSignal;
  /** Test seam: the address policy used when allowPrivate is false. */
  policy?: AddressPolicy;
  /** Test seam: stands in for DNS. */
  resolve?: Resolver;
}

export interface FetchedImage {
  path: string;
  width: number;
  height: number;
}

/**
 * The failures of a fetch, each always permanent or always retryable:
 * - permanent: INPUT_URL_REFUSED (scheme, credentials, refused address, also after a redirect),
 *   INPUT_NOT_FOUND (HTTP 4xx other than 408/425/429, unknown host), INPUT_NOT_IMAGE, INPUT_TOO_LARGE
 *   (bytes or pixels), INPUT_TOO_MANY_REDIRECTS, INPUT_TLS_INVALID, INPUT_BAD_RESPONSE (not HTTP);
 * - retryable: INPUT_FETCH_TIMEOUT, INPUT_FETCH_FAILED (5xx, 408/425/429, reset, refused, DNS trouble);
 * - from the caller's signal: its reason if a RenderError (e.g. RENDER_TIMEOUT), else RENDER_CANCELLED.
 */
export const FETCH_DEFAULTS = {
  maxBytes: 20 * 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 3,
  maxPixels: MAX_INPUT_PIXELS,
  maxDimension: 4096,
} as const;

// Raster formats only: SVG and PDF would make the decoder interpret documents that can reference files.
const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif', 'heif']);

/** The address policy of input images: the guard's, unless RENDERGATE_ALLOW_PRIVATE_URLS=1 lifts it. */
export function imagePolicy(
  opts: Pick<FetchImageOptions, 'allowPrivate' | 'policy'>,
): AddressPolicy {
  return opts.allowPrivate ? anyAddressPolicy : (opts.policy ?? publicAddressPolicy);
}

export async function fetchImage(input: string, opts: FetchImageOptions): Promise<FetchedImage> {
  const url = parseInputUrl(input);
  const where = describeUrl(url);
  const timeoutMs = opts.timeoutMs ?? FETCH_DEFAULTS.timeoutMs;
  const limit = deadline(
    opts.signal,
    timeoutMs,
    () =>
      new RenderError(
        'INPUT_FETCH_TIMEOUT',
        `Fetching ${where} took longer than ${Math.round(timeoutMs / 100) / 10} s.`,
        true,
      ),
  );
  try {
    const { body } = await guardedGet(url, {
      policy: imagePolicy(opts),
      maxBytes: opts.maxBytes ?? FETCH_DEFAULTS.maxBytes,
      maxRedirects: opts.maxRedirects ?? FETCH_DEFAULTS.maxRedirects,
      signal: limit.signal,
      resolve: opts.resolve,
    });
    return await normalise(body, where, opts);
  } finally {
    limit.dispose();
  }
}

/** Checks and normalises image bytes already in hand (an upload read from storage) as a fetch would. */
export function imageFromBytes(
  body: Buffer,
  where: string,
  opts: Pick<FetchImageOptions, 'workDir' | 'maxPixels' | 'maxDimension'>,
): Promise<FetchedImage> {
  return normalise(body, where, opts);
}

async function normalise(
  body: Buffer,
  where: string,
  opts: Pick<FetchImageOptions, 'workDir' | 'maxPixels' | 'maxDimension'>,
): Promise<FetchedImage> {
  const maxPixels = opts.maxPixels ?? FETCH_DEFAULTS.maxPixels;
  const maxDimension = opts.maxDimension ?? FETCH_DEFAULTS.maxDimension;
  const notImage = (cause?: unknown) =>
    new RenderError(
      'INPUT_NOT_IMAGE',
      `${where} is not an image in a supported format (JPEG, PNG, WebP, GIF, TIFF, AVIF).`,
      false,
      { cause },
    );

  let meta: Metadata;
  try {
    meta = await sharp(body, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw notImage(err);
  }
  if (!meta.format || !ACCEPTED_FORMATS.has(meta.format) || !meta.width || !meta.height)
    throw notImage();
  if (meta.width * meta.height > maxPixels) {
    throw new RenderError(
      'INPUT_TOO_LARGE',
      `${where} is ${meta.width}×${meta.height} pixels, more than the limit of ${maxPixels}.`,
      false,
    );
  }
  const path = join(opts.workDir, `input-${randomUUID()}.png`);
  try {
    // failOn 'error' rejects truncated or corrupt data instead of rendering a half-grey picture.
    const info = await sharp(body, { limitInputPixels: maxPixels, failOn: 'error' })
      .rotate()
      .resize({
        width: maxDimension,
        height: maxDimension,
        fit: 'inside',
        withoutEnlargement: true,
      })
      .png({ compressionLevel: 1 })
      .toFile(path);
    return { path, width: info.width, height: info.height };
  } catch (err) {
    throw notImage(err);
  }
}
