// Outputs as objects in an S3 bucket (AWS or any S3-compatible server). S3 makes an object visible only
// once its PUT, or its multipart upload, completes, so a reader never sees a partial output; the one
// thing left to us is not leaving the parts of a failed multipart upload behind (they are billed).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { pipeline, Transform, type Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ListedObject, Storage, StoredObject } from './storage.ts';

const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 4;

/** FileStorage's rule, so a key valid here is valid there. `..`, a leading `/` and `//` are refused
 * because S3-compatible servers and proxies disagree on how they normalise such request paths. */
export function checkKey(key: string): string {
  if (
    !/^[A-Za-z0-9._/-]{1,200}$/.test(key) ||
    key.includes('..') ||
    key.startsWith('/') ||
    key.includes('//')
  ) {
    throw new Error(`bad storage key ${key}`);
  }
  return key;
}

/** Client settings from the standard AWS variables. Explicit keys win; without them the SDK's default
 * chain (profiles, SSO, instance and pod roles) applies, which is what production hosts rely on. */
export function s3ClientConfig(env: NodeJS.ProcessEnv): S3ClientConfig {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  const pathStyle = env.AWS_S3_FORCE_PATH_STYLE === '1' || env.AWS_S3_FORCE_PATH_STYLE === 'true';
  const checksums = env.AWS_REQUEST_CHECKSUM_CALCULATION?.toUpperCase();
  return {
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    endpoint,
    // Self-hosted servers (MinIO, Ceph, s3rver) rarely have wildcard DNS for virtual-hosted buckets.
    forcePathStyle: Boolean(endpoint) || pathStyle,
    credentials:
      env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            sessionToken: env.AWS_SESSION_TOKEN || undefined,
          }
        : undefined,
    maxAttempts: 3,
    retryMode: 'standard',
    // Older S3-compatible servers reject the SDK's default CRC32 trailers; operators opt out here.
    ...(checksums === 'WHEN_REQUIRED' || checksums === 'WHEN_SUPPORTED'
      ? { requestChecksumCalculation: checksums, responseChecksumValidation: checksums }
      : {}),
  };
}

async function sha256Of(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('base64url');
}

export class S3Storage implements Storage {
  /** Exposed so tests (and metrics) can hook the middleware stack. */
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(opts: { bucket: string; prefix: string }, env: NodeJS.ProcessEnv = process.env) {
    this.client = new S3Client(s3ClientConfig(env));
    this.bucket = opts.bucket;
    this.prefix = opts.prefix.replace(/^\/+|\/+$/g, '');
  }

  private objectKey(key: string): string {
    checkKey(key);
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(key: string, source: string, contentType: string): Promise<StoredObject> {
    const Key = this.objectKey(key);
    // Metadata must be sent before the body, so a first pass hashes the file; the upload hashes again
    // while streaming, which proves the stored bytes are the ones the metadata and ETag describe.
    const expected = await sha256Of(source);
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    // pipeline() destroys the hashing stream with the source's error, so a read failure mid-way fails
    // the upload instead of completing it with a truncated body.
    let sourceError: Error | undefined;
    const body = pipeline(
      fs.createReadStream(source),
      new Transform({
        transform(chunk: Buffer, _enc, cb) {
          hash.update(chunk);
          bytes += chunk.length;
          cb(null, chunk);
        },
      }),
      (err) => {
        sourceError = err ?? undefined;
      },
    );
    const upload = new Upload({
      client: this.client,
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      params: {
        Bucket: this.bucket,
        Key,
        Body: body,
        ContentType: contentType,
        Metadata: { sha256: expected },
      },
    });
    try {
      await upload.done();
    } catch (e) {
      body.destroy();
      // lib-storage aborts on failure too, but its abort can itself fail: a second abort is harmless
      // (NoSuchUpload), a missed one leaves billed parts behind.
      if (upload.uploadId) {
        await this.client
          .send(
            new AbortMultipartUploadCommand({
              Bucket: this.bucket,
              Key,
              UploadId: upload.uploadId,
            }),
          )
          .catch(() => undefined);
      }
      // lib-storage reports a failed abort in place of the read error that caused it; the cause matters more.
      throw sourceError ?? e;
    }
    const digest = hash.digest('base64url');
    if (digest !== expected) {
      await this.client
        .send(new DeleteObjectCommand({ Bucket: this.bucket, Key }))
        .catch(() => undefined);
      throw new Error(`storage source ${source} changed while it was uploaded`);
    }
    return { bytes, etag: `"${digest}"` };
  }

  /** One PUT (an upload's body is at most tens of MiB, far below a single PUT's 5 GiB). */
  async putBytes(key: string, bytes: Buffer, contentType: string): Promise<StoredObject> {
    const digest = crypto.createHash('sha256').update(bytes).digest('base64url');
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: bytes,
        ContentLength: bytes.length,
        ContentType: contentType,
        Metadata: { sha256: digest },
      }),
    );
    return { bytes: bytes.length, etag: `"${digest}"` };
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const res = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Range: range ? `bytes=${range.start}-${range.end}` : undefined,
      }),
    );
    // On Node the SDK's body is an http.IncomingMessage, a Readable.
    return res.Body as Readable;
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a missing key too, so deleting twice is fine.
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
    );
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    const strip = this.prefix ? this.prefix.length + 1 : 0;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix ? `${this.prefix}/${prefix}` : prefix,
          ContinuationToken,
        }),
      );
      for (const o of page.Contents ?? []) {
        if (o.Key && o.LastModified) yield { key: o.Key.slice(strip), modifiedAt: o.LastModified };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  async check(): Promise<void> {
    // A real write, not HeadBucket: read-only credentials must fail readiness.
    const Key = this.objectKey(`.probe/${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key, Body: 'ok', ContentType: 'text/plain' }),
    );
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }));
  }
}
