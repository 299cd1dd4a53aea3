/// <reference lib="es2022" preserve="true" />
// Node-only helpers (the rest of the SDK needs only fetch): read an image to upload, save a download.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp';

/** The image type of some bytes, from their signature (what the server checks too), or undefined. */
export function sniffImageType(b: Uint8Array): ImageType | undefined {
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47)
    return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (
    b.length >= 12 &&
    String.fromCharCode(...b.slice(0, 4)) === 'RIFF' &&
    String.fromCharCode(...b.slice(8, 12)) === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

/** A file's bytes and image type, ready for `rg.uploads.create(bytes, contentType)`. */
export async function readImageFile(
  path: string,
): Promise<{ bytes: Uint8Array; contentType: ImageType }> {
  const bytes = new Uint8Array(await fsp.readFile(path));
  const contentType = sniffImageType(bytes);
  if (!contentType) throw new Error(`${path} is not a PNG, JPEG or WebP image`);
  return { bytes, contentType };
}

/** Streams a Response's body into a file (written beside it, then renamed); resolves with the bytes written. */
export async function saveResponse(res: Response, path: string): Promise<number> {
  if (!res.body) throw new Error('the answer has no body');
  const tmp = `${path}.part-${process.pid}`;
  try {
    await pipeline(
      Readable.fromWeb(res.body as unknown as NodeReadableStream),
      fs.createWriteStream(tmp),
    );
    await fsp.rename(tmp, path);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  return (await fsp.stat(path)).size;
}
