// Outputs as files under a root directory: written to a temporary name, fsynced, then renamed, so an
// object is either complete or absent.
import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import type { ListedObject, Storage, StoredObject } from './storage.ts';

/** Renames a written and synced temporary file to `dest`, durably: a rename lasts once its directory is synced. */
async function publish(tmp: string, dest: string): Promise<void> {
  const dir = path.dirname(dest);
  await fsp.mkdir(dir, { recursive: true });
  await fsp.rename(tmp, dest);
  const d = await fsp.open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

export class FileStorage implements Storage {
  constructor(private root: string) {
    fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
  }

  private pathOf(key: string): string {
    if (!/^[A-Za-z0-9._/-]{1,200}$/.test(key) || key.includes('..'))
      throw new Error(`bad storage key ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, source: string): Promise<StoredObject> {
    const dest = this.pathOf(key);
    const tmp = this.tempPath();
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    const out = fs.createWriteStream(tmp, { flags: 'wx', mode: 0o640, flush: true });
    try {
      // flush: fsync before the stream closes its descriptor (a FileHandle stream with autoClose:false
      // keeps a reference that makes FileHandle.close() wait forever).
      await pipeline(
        fs.createReadStream(source),
        new Transform({
          transform(chunk: Buffer, _enc, cb) {
            hash.update(chunk);
            bytes += chunk.length;
            cb(null, chunk);
          },
        }),
        out,
      );
      await publish(tmp, dest);
    } catch (e) {
      // A source that fails before the temporary file is open (a missing source) destroys the stream
      // while its open is under way: the file appears after an rm made at once. Removed once closed.
      if (!out.closed)
        await once(out, 'close', { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      await fsp.rm(tmp, { force: true });
      throw e;
    }
    return { bytes, etag: `"${hash.digest('base64url')}"` };
  }

  async putBytes(key: string, bytes: Buffer): Promise<StoredObject> {
    const dest = this.pathOf(key);
    const tmp = this.tempPath();
    try {
      const file = await fsp.open(tmp, 'wx', 0o640);
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await publish(tmp, dest);
    } catch (e) {
      await fsp.rm(tmp, { force: true });
      throw e;
    }
    const etag = crypto.createHash('sha256').update(bytes).digest('base64url');
    return { bytes: bytes.length, etag: `"${etag}"` };
  }

  private tempPath(): string {
    return path.join(this.root, '.tmp', `${crypto.randomBytes(8).toString('hex')}.part`);
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const file = await fsp.open(this.pathOf(key), 'r');
    return file.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    const dir = this.pathOf(prefix.replace(/\/+$/, ''));
    let entries: fs.Dirent[];
    try {
      entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const stat = await fsp.stat(file).catch(() => null); // removed meanwhile
      if (stat)
        yield {
          key: path.relative(this.root, file).split(path.sep).join('/'),
          modifiedAt: stat.mtime,
        };
    }
  }

  async check(): Promise<void> {
    const probe = path.join(this.root, '.tmp', `probe-${process.pid}`);
    await fsp.writeFile(probe, 'ok');
    await fsp.rm(probe, { force: true });
  }
}
