// The results of test renders read without waiting (src/queue/test-output.ts, test-stored.ts), so a
// test create can record its render final (migrations/019): a file only once it is made, a stored
// object only once it is put and only within the refresh time of that put, as when a batch names it.
// Real files and a real FileStorage in a temporary folder; only the clock is set by hand.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { FileStorage } from '../../../src/storage/file.ts';
import type { Storage } from '../../../src/storage/storage.ts';
import { SHARED_TEST_KEY, StoredTestFiles } from '../../../src/queue/test-stored.ts';
import { TestOutputs } from '../../../src/queue/test-output.ts';
import type { ModelDef } from '../../../src/domain/catalog.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-tor-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

/** A FileStorage that counts its puts, and fails the next `failing` of them. */
function countingStorage(root: string) {
  const files = new FileStorage(root);
  const s = {
    puts: 0,
    failing: 0,
    put: (key: string, p: string) => {
      s.puts++;
      if (s.failing > 0) {
        s.failing--;
        return Promise.reject(new Error('storage away'));
      }
      return files.put(key, p);
    },
    putBytes: files.putBytes.bind(files),
    read: files.read.bind(files),
    delete: files.delete.bind(files),
    check: files.check.bind(files),
    list: files.list.bind(files),
  };
  return s satisfies Storage & { puts: number; failing: number };
}

const IMAGE = {
  id: 'acme/still',
  kind: 'image',
  output: { type: 'file', contentType: 'image/png' },
} as unknown as ModelDef;

describe('test outputs at hand', () => {
  it('a file is at hand once made, for the same type, size and duration only', async () => {
    const outputs = new TestOutputs();
    try {
      expect(outputs.ready(IMAGE, { width: 64, height: 48 })).toBeNull();
      const made = await outputs.file(IMAGE, { width: 64, height: 48 });
      expect(fs.existsSync(made.path)).toBe(true);
      expect(outputs.ready(IMAGE, { width: 64, height: 48 })).toEqual(made);
      expect(outputs.ready(IMAGE, { width: 64, height: 50 })).toBeNull();
    } finally {
      await outputs.close();
    }
    expect(outputs.ready(IMAGE, { width: 64, height: 48 })).toBeNull();
  });

  it('a stored object is at hand once put, and only within the refresh time of its put', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-24T00:00:00Z'));
    const storage = countingStorage(path.join(dir, 'store'));
    const stored = new StoredTestFiles(storage, 60_000);
    const file = { path: path.join(dir, 'a.txt'), contentType: 'text/plain' };
    fs.writeFileSync(file.path, 'the same bytes\n');
    expect(stored.ready(file)).toBeNull();
    const put = await stored.object(file);
    expect(put.key).toMatch(SHARED_TEST_KEY);
    expect(put).toMatchObject({ contentType: 'text/plain', bytes: 15 });
    expect(stored.ready(file)).toEqual(put);
    expect(storage.puts).toBe(1);

    vi.setSystemTime(new Date('2026-11-24T00:00:59Z'));
    expect(stored.ready(file)).toEqual(put);
    // Past its refresh time: not named any more until it is put again (a new modification time).
    vi.setSystemTime(new Date('2026-11-24T00:01:00Z'));
    expect(stored.ready(file)).toBeNull();
    expect(await stored.object(file)).toEqual(put);
    expect(storage.puts).toBe(2);
    expect(stored.ready(file)).toEqual(put);
  });

  it('a put that failed leaves nothing at hand, and the next one puts again', async () => {
    const storage = countingStorage(path.join(dir, 'store-2'));
    const stored = new StoredTestFiles(storage, 60_000);
    const file = { path: path.join(dir, 'b.txt'), contentType: 'text/plain' };
    fs.writeFileSync(file.path, 'other bytes\n');
    storage.failing = 1;
    await expect(stored.object(file)).rejects.toThrow('storage away');
    expect(stored.ready(file)).toBeNull();
    const put = await stored.object(file);
    expect(storage.puts).toBe(2);
    expect(stored.ready(file)).toEqual(put);
  });
});
