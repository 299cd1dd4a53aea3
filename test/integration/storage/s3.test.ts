// One behavioural suite for every Storage driver, run against FileStorage and against S3Storage talking
// to a real S3-compatible server (s3rver, from the npm registry) on a loopback port.
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { CreateBucketCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileStorage } from '../../../src/storage/file.ts';
import { createStorage } from '../../../src/storage/index.ts';
import { S3Storage, s3ClientConfig } from '../../../src/storage/s3.ts';
import type { Storage } from '../../../src/storage/storage.ts';

const MiB = 1024 * 1024;
let tmp: string;
let server: S3rver;
let s3env: NodeJS.ProcessEnv;
const small = crypto.randomBytes(100_000);
const big = crypto.randomBytes(20 * MiB);
const files: Record<'small' | 'big', string> = { small: '', big: '' };

beforeAll(async () => {
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'rg-storage-'));
  server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: path.join(tmp, 's3rver'),
  });
  const { port } = await server.run();
  s3env = {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
  };
  await new S3Storage({ bucket: 'outputs', prefix: '' }, s3env).client.send(
    new CreateBucketCommand({ Bucket: 'outputs' }),
  );
  for (const [name, data] of [
    ['small', small],
    ['big', big],
  ] as const) {
    files[name] = path.join(tmp, `${name}.bin`);
    await fsp.writeFile(files[name], data);
  }
});

afterAll(async () => {
  await server?.close();
  if (tmp) await fsp.rm(tmp, { recursive: true, force: true });
});

const sha = (b: Buffer) => `"${crypto.createHash('sha256').update(b).digest('base64url')}"`;
const readAll = async (s: Storage, key: string, range?: { start: number; end: number }) =>
  buffer(await s.read(key, range));

/** Names of the S3 commands a storage sends, recorded at the top of the SDK's middleware stack. */
function recordCommands(s: S3Storage): string[] {
  const seen: string[] = [];
  s.client.middlewareStack.add(
    (next, context) => (args) => {
      seen.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return seen;
}

/** Passes one read of `file`, after `skip` untouched ones, through `alter` (chunk, bytes read so far). */
function alterReadOf(file: string, skip: number, alter: (chunk: Buffer, seen: number) => Buffer) {
  const real = fs.createReadStream;
  let opens = 0;
  return vi.spyOn(fs, 'createReadStream').mockImplementation(((p: string, o?: object) => {
    if (p !== file || opens++ !== skip) return real(p, o);
    let seen = 0;
    return pipeline(
      real(p, o as never),
      new Transform({
        transform(chunk: Buffer, _e, cb) {
          seen += chunk.length;
          try {
            cb(null, alter(chunk, seen));
          } catch (e) {
            cb(e as Error);
          }
        },
      }),
      () => undefined,
    );
  }) as typeof fs.createReadStream);
}

/** Fails past `after` bytes with EIO, as a dying disk (or a file removed from under NFS) would. */
const eioAfter = (after: number) => (chunk: Buffer, seen: number) => {
  if (seen > after) throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
  return chunk;
};

interface Driver {
  storage: Storage;
  commands: string[];
  tempFiles: () => Promise<string[]>;
}
const drivers: Array<[string, () => Driver]> = [
  [
    'FileStorage',
    () => {
      const root = path.join(tmp, `files-${crypto.randomBytes(4).toString('hex')}`);
      return {
        storage: new FileStorage(root),
        commands: [],
        tempFiles: () => fsp.readdir(path.join(root, '.tmp')),
      };
    },
  ],
  [
    'S3Storage',
    () => {
      const storage = new S3Storage(
        { bucket: 'outputs', prefix: `run-${crypto.randomBytes(4).toString('hex')}/out` },
        s3env,
      );
      return { storage, commands: recordCommands(storage), tempFiles: () => Promise.resolve([]) };
    },
  ],
];

describe.each(drivers)('%s', { timeout: 20_000 }, (name, make) => {
  let d: Driver;
  beforeAll(() => {
    d = make();
  });

  it('stores a file and reads it back whole and by ranges, byte-exact', async () => {
    const stored = await d.storage.put('generations/a.mp4', files.small, 'video/mp4');
    expect(stored).toEqual({ bytes: small.length, etag: sha(small) });
    expect((await readAll(d.storage, 'generations/a.mp4')).equals(small)).toBe(true);
    for (const [start, end] of [
      [0, 99],
      [40_000, 59_999],
      [small.length - 1, small.length - 1],
    ]) {
      expect(
        (await readAll(d.storage, 'generations/a.mp4', { start, end })).equals(
          small.subarray(start, end + 1),
        ),
      ).toBe(true);
    }
  });

  it('stores bytes held in memory in one write, byte-exact, with the same ETag as a file', async () => {
    d.commands.length = 0;
    const stored = await d.storage.putBytes('uploads/b.png', small, 'image/png');
    expect(stored).toEqual({ bytes: small.length, etag: sha(small) });
    expect((await readAll(d.storage, 'uploads/b.png')).equals(small)).toBe(true);
    expect(await d.tempFiles()).toEqual([]);
    if (name === 'S3Storage') expect(d.commands).toEqual(['PutObjectCommand', 'GetObjectCommand']);
    await expect(d.storage.putBytes('../escape.png', small, 'image/png')).rejects.toThrow(
      /bad storage key/,
    );
  });

  it('stores a 20 MiB file (multipart on S3) byte-exact', async () => {
    const stored = await d.storage.put('generations/big.mp4', files.big, 'video/mp4');
    expect(stored).toEqual({ bytes: big.length, etag: sha(big) });
    if (name === 'S3Storage') {
      expect(d.commands.filter((c) => c === 'UploadPartCommand')).toHaveLength(3);
      expect(d.commands).toContain('CompleteMultipartUploadCommand');
    }
    expect((await readAll(d.storage, 'generations/big.mp4')).equals(big)).toBe(true);
    const across = { start: 8 * MiB - 10, end: 8 * MiB + 9 }; // spans the first part boundary
    expect(
      (await readAll(d.storage, 'generations/big.mp4', across)).equals(
        big.subarray(across.start, across.end + 1),
      ),
    ).toBe(true);
  });

  it('leaves no object and no temporary data when the source fails mid-way', async () => {
    d.commands.length = 0;
    // The S3 driver reads the source twice (hash, then upload): fail the upload, after a part went out.
    const spy = alterReadOf(files.big, name === 'S3Storage' ? 1 : 0, eioAfter(12 * MiB));
    try {
      await expect(d.storage.put('generations/broken.mp4', files.big, 'video/mp4')).rejects.toThrow(
        /EIO/,
      );
    } finally {
      spy.mockRestore();
    }
    await expect(readAll(d.storage, 'generations/broken.mp4')).rejects.toThrow();
    expect(await d.tempFiles()).toEqual([]);
    if (name === 'S3Storage') {
      expect(d.commands).toContain('UploadPartCommand');
      expect(d.commands).toContain('AbortMultipartUploadCommand');
      expect(d.commands).not.toContain('CompleteMultipartUploadCommand');
    }
  });

  it('fails cleanly when the source does not exist', async () => {
    await expect(
      d.storage.put('generations/none.mp4', path.join(tmp, 'missing.bin'), 'video/mp4'),
    ).rejects.toThrow(/ENOENT/);
    await expect(readAll(d.storage, 'generations/none.mp4')).rejects.toThrow();
    expect(await d.tempFiles()).toEqual([]);
  });

  it('deletes, and deleting a missing object is fine', async () => {
    await d.storage.put('generations/d.mp4', files.small, 'video/mp4');
    await d.storage.delete('generations/d.mp4');
    await expect(readAll(d.storage, 'generations/d.mp4')).rejects.toThrow();
    await d.storage.delete('generations/d.mp4');
  });

  it('lists the objects under a prefix with when they were written (the orphan sweep reads it)', async () => {
    const before = Date.now() - 5_000;
    for (const key of ['listed/x/one.bin', 'listed/x/two.bin', 'listed/y.bin', 'other/z.bin'])
      await d.storage.put(key, files.small, 'application/octet-stream');
    const listed: { key: string; modifiedAt: Date }[] = [];
    for await (const o of d.storage.list('listed/')) listed.push(o);
    expect(listed.map((o) => o.key).sort()).toEqual([
      'listed/x/one.bin',
      'listed/x/two.bin',
      'listed/y.bin',
    ]);
    for (const o of listed) expect(o.modifiedAt.getTime()).toBeGreaterThan(before);
    const none: unknown[] = [];
    for await (const o of d.storage.list('nothing-here/')) none.push(o);
    expect(none).toEqual([]);
  });

  it('refuses keys that could escape their root', async () => {
    for (const key of [
      '../x',
      'generations/../../etc/passwd',
      'a b',
      'a\\b',
      '',
      'x'.repeat(201),
    ]) {
      await expect(d.storage.put(key, files.small, 'video/mp4')).rejects.toThrow(/bad storage key/);
    }
    await expect(d.storage.read('../x')).rejects.toThrow(/bad storage key/);
  });

  it('passes its readiness check', async () => {
    await d.storage.check();
    expect(await d.tempFiles()).toEqual([]);
  });
});

describe('S3Storage specifics', () => {
  it('gives the same ETag as FileStorage, and keeps the SHA-256 in the metadata, single part, multipart or bytes', async () => {
    const s3 = new S3Storage({ bucket: 'outputs', prefix: 'etag' }, s3env);
    for (const name of ['small', 'big'] as const) {
      const stored = await s3.put(`${name}.bin`, files[name], 'application/octet-stream');
      expect(stored).toEqual(
        await new FileStorage(path.join(tmp, 'etag')).put(`${name}.bin`, files[name]),
      );
      const head = await s3.client.send(
        new HeadObjectCommand({ Bucket: 'outputs', Key: `etag/${name}.bin` }),
      );
      expect(head.Metadata).toMatchObject({ sha256: stored.etag.slice(1, -1) });
    }
    const bytes = await s3.putBytes('bytes.png', small, 'image/png');
    expect(bytes).toEqual(
      await new FileStorage(path.join(tmp, 'etag')).putBytes('bytes.png', small),
    );
    const head = await s3.client.send(
      new HeadObjectCommand({ Bucket: 'outputs', Key: 'etag/bytes.png' }),
    );
    expect(head).toMatchObject({
      ContentType: 'image/png',
      ContentLength: small.length,
      Metadata: { sha256: bytes.etag.slice(1, -1) },
    });
  });

  it('refuses, and removes, an upload whose source changed after it was hashed', async () => {
    const s3 = new S3Storage({ bucket: 'outputs', prefix: 'changed' }, s3env);
    const spy = alterReadOf(files.small, 1, (chunk) =>
      Buffer.concat([Buffer.from([chunk[0] ^ 1]), chunk.subarray(1)]),
    );
    try {
      await expect(s3.put('c.bin', files.small, 'application/octet-stream')).rejects.toThrow(
        /changed while it was uploaded/,
      );
    } finally {
      spy.mockRestore();
    }
    await expect(readAll(s3, 'c.bin')).rejects.toThrow();
  });

  it('refuses keys whose request path servers would normalise', async () => {
    const s3 = new S3Storage({ bucket: 'outputs', prefix: '' }, s3env);
    for (const key of ['/abs', 'a//b'])
      await expect(s3.read(key)).rejects.toThrow(/bad storage key/);
  });

  it('fails its readiness check when the bucket does not exist', async () => {
    await expect(
      new S3Storage({ bucket: 'no-such-bucket', prefix: '' }, s3env).check(),
    ).rejects.toThrow();
  });

  it('reads its client settings from the standard AWS variables', () => {
    expect(s3ClientConfig({})).toMatchObject({
      region: 'us-east-1',
      forcePathStyle: false,
      maxAttempts: 3,
      credentials: undefined,
    });
    expect(
      s3ClientConfig({ AWS_DEFAULT_REGION: 'eu-west-3', AWS_S3_FORCE_PATH_STYLE: '1' }),
    ).toMatchObject({ region: 'eu-west-3', forcePathStyle: true, endpoint: undefined });
    expect(
      s3ClientConfig({
        AWS_REGION: 'eu-central-1',
        AWS_ENDPOINT_URL: 'http://a:9000',
        AWS_ENDPOINT_URL_S3: 'http://b:9000',
      }),
    ).toMatchObject({ region: 'eu-central-1', endpoint: 'http://b:9000', forcePathStyle: true });
  });

  it('is what createStorage returns for an s3 configuration', () => {
    expect(createStorage({ driver: 's3', bucket: 'outputs', prefix: 'p' }, s3env)).toBeInstanceOf(
      S3Storage,
    );
    expect(createStorage({ driver: 'file', root: path.join(tmp, 'cs') })).toBeInstanceOf(
      FileStorage,
    );
  });
});
