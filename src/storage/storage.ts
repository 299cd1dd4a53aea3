// Where render outputs live. A `put` is all-or-nothing: a reader never sees a half-written object,
// so a crash can not leave a partial file behind a `succeeded` status.
import type { Readable } from 'node:stream';

export interface StoredObject {
  bytes: number;
  /** A strong validator of the content (its SHA-256), quoted as an HTTP ETag. */
  etag: string;
}

export interface Storage {
  /** Copies the local file at `path` to `key`, atomically. */
  put(key: string, path: string, contentType: string): Promise<StoredObject>;
  /** Stores `bytes`, already in memory (an upload's body), at `key`, atomically: no file in between. */
  putBytes(key: string, bytes: Buffer, contentType: string): Promise<StoredObject>;
  /** A stream of bytes [start, end] inclusive (the whole object when no range is given). */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
  delete(key: string): Promise<void>;
  /** Throws when the storage cannot be written (for readiness checks). */
  check(): Promise<void>;
  /** Every stored object whose key starts with `prefix` (e.g. `generations/`), with when it was written. */
  list(prefix: string): AsyncIterable<ListedObject>;
}

export interface ListedObject {
  key: string;
  modifiedAt: Date;
}
