// RenderContext.readUpload for the worker: an image input given as an upload `url` (docs/api.md
// "Uploads") is read from storage, never fetched over the network, and only when the upload belongs to
// the render's account and is still kept. A gone upload fails the render for good (refunded).
import type { Readable } from 'node:stream';
import type { Db } from '../db/pool.ts';
import { uploadForRender } from '../db/uploads.ts';
import { RenderError, type RenderContext } from '../backends/types.ts';
import type { Storage } from '../storage/storage.ts';

const gone = (cause?: unknown) =>
  new RenderError(
    'INPUT_UPLOAD_GONE',
    'An uploaded input image was deleted or has expired before the render ran.',
    false,
    { cause },
  );

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The reader of one render's uploads (`generationId` names the render, and through it the account). */
export function uploadReader(db: Db, storage: Storage, publicUrl: string) {
  const prefix = `${publicUrl}/v1/uploads/`;
  return (generationId: string): RenderContext['readUpload'] =>
    async (url) => {
      if (!url.startsWith(prefix)) return null;
      const upload = await uploadForRender(db, generationId, url.slice(prefix.length));
      if (!upload) throw gone();
      try {
        return {
          bytes: await readAll(await storage.read(upload.storage_key)),
          contentType: upload.content_type,
        };
      } catch (e) {
        if (
          (e as NodeJS.ErrnoException).code === 'ENOENT' ||
          (e as { name?: string }).name === 'NoSuchKey'
        )
          throw gone(e);
        throw new RenderError(
          'STORAGE_FAILED',
          'An uploaded input image could not be read from storage.',
          true,
          { cause: e },
        );
      }
    };
}
