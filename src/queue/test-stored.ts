// The stored files of test renders (docs/api.md "Test keys"): one stored object per distinct content,
// named by every test generation whose result it is, instead of a copy per render. Its key is its
// SHA-256, so two processes (or two releases) storing it write the same bytes, and what a row recorded
// (bytes, ETag) stays true for as long as the object exists.
// Such an object is removed only by the janitor's orphan sweep (queue/orphans.ts), once no row names it
// and it is older than ORPHAN_MIN_AGE_MS: deleting, refunding or expiring one test generation forgets
// the key on that row and leaves the object to the others (isSharedTestOutput). A process names an
// object only within REFRESH_MS of its own last put of it, and puts it again after that (a new
// modification time), so a sweep never removes an object that a batch being recorded, or a create
// recording its render final (`ready`, migrations/019), is about to name.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Storage } from '../storage/storage.ts';
import type { TestFile } from './test-output.ts';

const MAX_REMEMBERED = 64;

export const SHARED_TEST_PREFIX = 'test-outputs/';
/** The key of a shared test output: its content's SHA-256, and an extension from its type. */
export const SHARED_TEST_KEY = /^test-outputs\/[0-9a-f]{64}\.[a-z0-9]{1,8}$/;

/** True for a key other rows may name too: never removed for one row's sake. */
export function isSharedTestOutput(key: string): boolean {
  return key.startsWith(SHARED_TEST_PREFIX);
}

export interface StoredTestFile {
  key: string;
  contentType: string;
  bytes: number;
  etag: string;
}

async function sha256Hex(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

interface Entry {
  since: number;
  object: Promise<StoredTestFile>;
  /** The object once put: read without waiting (`ready`). */
  done?: StoredTestFile;
}

export class StoredTestFiles {
  private stored = new Map<string, Entry>();

  /** `refreshMs`: how long after its put this process names an object without putting it again. */
  constructor(
    private storage: Storage,
    private refreshMs: number,
  ) {}

  /**
   * The stored object holding `file`'s content if it is put and may be named now (within `refreshMs`
   * of its put, as `object` gives it); null otherwise: then `object` puts it (again).
   */
  ready(file: TestFile): StoredTestFile | null {
    const had = this.stored.get(file.path);
    return had?.done && Date.now() - had.since < this.refreshMs ? had.done : null;
  }

  /** The stored object holding `file`'s content: put once, then again every `refreshMs`. */
  object(file: TestFile): Promise<StoredTestFile> {
    const had = this.stored.get(file.path);
    // `since` is taken before the put begins: the object's modification time is never earlier.
    if (had && Date.now() - had.since < this.refreshMs) return had.object;
    const since = Date.now();
    const object = this.put(file);
    // Bounded like the local files (test-output.ts): the oldest entry goes; its object is the sweep's.
    if (!had && this.stored.size >= MAX_REMEMBERED)
      this.stored.delete(this.stored.keys().next().value!);
    const entry: Entry = { since, object };
    this.stored.set(file.path, entry);
    object.then(
      (done) => {
        entry.done = done;
      },
      () => {
        if (this.stored.get(file.path) === entry) this.stored.delete(file.path);
      },
    );
    return object;
  }

  private async put(file: TestFile): Promise<StoredTestFile> {
    const sub = file.contentType.split('/')[1] ?? '';
    const ext = sub.replace(/[^a-z0-9]/g, '').slice(0, 8) || 'bin';
    const key = `${SHARED_TEST_PREFIX}${await sha256Hex(file.path)}.${ext}`;
    const s = await this.storage.put(key, file.path, file.contentType);
    return { key, contentType: file.contentType, bytes: s.bytes, etag: s.etag };
  }
}
