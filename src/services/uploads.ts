// Uploaded images (docs/api.md "Uploads"): checked by decoding them, stored through Storage, owned by an
// account and kept until they expire. An upload's `url` used as a render input is checked here at quote
// and create, and read from storage by the worker (src/queue/upload-reader.ts), never over the network.
import { unlessBackingUp } from '../db/backup-lock.ts';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import {
  deleteUploadRows,
  keptUpload,
  keptUploadIds,
  keptUploads,
  markUploadDeleted,
  type UploadRow,
  fits,
  insertWithinQuota,
  usageFor,
} from '../db/uploads.ts';
import type { CompiledModel } from '../domain/catalog-load.ts';
import type { ResolvedInputs } from '../domain/catalog.ts';
import { ApiError, invalidInput, type FieldProblem } from '../domain/errors.ts';
import { isId, newId } from '../domain/ids.ts';
import type { Storage } from '../storage/storage.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import { UploadQuota } from '../admission/upload-quota.ts';
import { decodeRows, readHeader } from './upload-image.ts';
import { decodeTurns, UPLOAD_BURST, UploadTurns } from '../admission/upload-turns.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';

/** Accepted Content-Types and the format sharp must find in the bytes. */
export const UPLOAD_TYPES: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/webp': 'webp',
};

/** The media type of a Content-Type (parameters allowed) when uploads take it, else undefined. */
export function uploadType(contentType: string | undefined): string | undefined {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return Object.hasOwn(UPLOAD_TYPES, type) ? type : undefined;
}

const notFound = () => new ApiError('UPLOAD_NOT_FOUND', 'No such upload.');

export class Uploads {
  private prefix: string;
  readonly quota: UploadQuota;
  private turns: UploadTurns;

  constructor(
    private db: Db,
    private storage: Storage,
    private config: Config,
  ) {
    this.prefix = `${config.publicUrl}/v1/uploads/`;
    this.quota = new UploadQuota({
      bytes: config.uploadQuotaBytes,
      count: config.uploadQuotaCount,
    });
    this.turns = new UploadTurns(
      db,
      config.uploadsPerSecond,
      Math.max(UPLOAD_BURST, config.uploadsPerSecond),
    );
  }

  private view(r: UploadRow) {
    return {
      id: r.id,
      url: this.prefix + r.id,
      contentType: r.content_type,
      sizeBytes: r.size_bytes,
      width: r.width,
      height: r.height,
      createdAt: r.created_at.toISOString(),
      expiresAt: r.expires_at.toISOString(),
    };
  }

  /**
   * Stores an image of `contentType` (its media type, parameters allowed) for the account, within the
   * account's upload quota: checked before the work (to refuse early: from the usage of a refusal
   * remembered, admission/upload-quota.ts, else from the account's count) and again by the statement that
   * records it and counts it (so parallel uploads cannot pass it together; only it lets one in).
   */
  async create(p: Principal, contentType: string | undefined, body: Buffer | undefined) {
    const accountId = accountFor(p, 'renders.create'); // an upload is a render's input
    const type = uploadType(contentType);
    if (type === undefined)
      throw new ApiError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Send the image as ${Object.keys(UPLOAD_TYPES).join(', ')}.`,
      );
    if (!Buffer.isBuffer(body) || body.length === 0)
      throw invalidInput([{ field: 'body', message: 'is empty; send the image bytes' }]);
    const quota = this.quota.limits;
    const early = this.quota.early(accountId, body.length);
    if (early) throw early;
    const before = await usageFor(this.db, accountId, body.length, quota);
    if (!fits(before, body.length, quota)) throw this.quota.refuse(accountId, before);
    const header = await readHeader(body, UPLOAD_TYPES[type], type);
    const { width, height } = header;
    await this.turns.take(accountId, decodeTurns(UPLOAD_TYPES[type], width * height));
    await decodeRows(header, type);
    const id = newId('upl');
    const key = `uploads/${id}`;
    // The row is written only once the file is stored; a file whose row could not be written goes.
    try {
      await this.storage.putBytes(key, body, type);
    } catch (e) {
      throw storageFailure(e);
    }
    let made: Awaited<ReturnType<typeof insertWithinQuota>>;
    try {
      made = await insertWithinQuota(
        this.db,
        {
          id,
          accountId,
          key,
          contentType: type,
          sizeBytes: body.length,
          width,
          height,
          retentionSeconds: this.config.uploadRetentionSeconds,
        },
        quota,
      );
    } catch (e) {
      await this.storage.delete(key).catch(() => undefined);
      throw e;
    }
    if ('refused' in made) {
      // Another upload of the account took the room meanwhile: this file has no row and goes now.
      await this.storage.delete(key).catch(() => undefined);
      throw this.quota.refuse(accountId, made.refused);
    }
    return this.view(made.row);
  }

  private async row(accountId: string, id: string): Promise<UploadRow> {
    if (!isId('upl', id)) throw notFound();
    const row = await keptUpload(this.db, accountId, id);
    if (!row) throw notFound();
    return row;
  }

  async get(p: Principal, id: string) {
    return this.view(await this.row(accountFor(p, 'renders.view'), id));
  }

  /** The upload's bytes, for GET /v1/uploads/{id}. */
  async open(
    p: Principal,
    id: string,
  ): Promise<{ contentType: string; sizeBytes: number; body: Readable }> {
    const r = await this.row(accountFor(p, 'renders.view'), id);
    try {
      return {
        contentType: r.content_type,
        sizeBytes: r.size_bytes,
        body: await this.storage.read(r.storage_key),
      };
    } catch (e) {
      if (
        (e as NodeJS.ErrnoException).code === 'ENOENT' ||
        (e as { name?: string }).name === 'NoSuchKey'
      )
        throw notFound();
      throw e;
    }
  }

  async list(
    p: Principal,
    q: { limit: number; cursor: string | null },
  ): Promise<Page<Record<string, unknown>>> {
    const accountId = accountFor(p, 'renders.view');
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const rows = await keptUploads(this.db, accountId, after, q.limit + 1);
    const data = rows.slice(0, q.limit).map((r) => this.view(r));
    return {
      data,
      nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id) : null,
    };
  }

  /** Marks the upload deleted (it is refused from now on), then removes its file; the janitor finishes a removal a crash interrupted. */
  async delete(p: Principal, id: string) {
    const accountId = accountFor(p, 'renders.delete');
    if (!isId('upl', id)) throw notFound();
    const storageKey = await markUploadDeleted(this.db, accountId, id);
    if (storageKey === null) throw notFound();
    this.quota.forget(accountId);
    // Not while a backup copies the files its snapshot names (db/backup-lock.ts): the janitor removes it later.
    await unlessBackingUp(this.db, async (tx) => {
      await this.storage.delete(storageKey);
      await deleteUploadRows(tx, [id]);
    }).catch(() => undefined);
    return { id, deleted: true };
  }

  /** Upload ids named by the model's image `url` inputs, by input name; empty when none is an upload address. */
  uploadInputs(model: CompiledModel, inputs: ResolvedInputs): Map<string, string> {
    const found = new Map<string, string>();
    for (const f of model.def.fields) {
      const v = inputs[f.name];
      if (
        f.type === 'url' &&
        f.media === 'image' &&
        typeof v === 'string' &&
        v.startsWith(this.prefix)
      )
        found.set(f.name, v.slice(this.prefix.length));
    }
    return found;
  }

  /** 400 naming each image input that is an upload address of another account, unknown, deleted or expired. */
  async checkInputs(p: Principal, named: Map<string, string>): Promise<void> {
    const accountId = accountFor(p, 'models.view'); // a quote's, or a create's (authorized there)
    const ids = [...named.values()].filter((id) => isId('upl', id));
    const ok = await keptUploadIds(this.db, accountId, ids);
    const problems: FieldProblem[] = [];
    for (const [name, id] of named) {
      if (!ok.has(id))
        problems.push({
          field: `inputs.${name}`,
          message: 'is not an upload of this account, or it was deleted or has expired',
        });
    }
    if (problems.length > 0) throw invalidInput(problems);
  }
}

const FULL = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/**
 * A storage failure as the client sees it (docs/api.md "Abuse limits", "Faults"): a full disk or quota
 * is 507 INSUFFICIENT_STORAGE, anything else (read-only, I/O error, a bucket away) 503; both with
 * Retry-After, and nothing stored.
 */
export function storageFailure(e: unknown): ApiError {
  const code = (e as NodeJS.ErrnoException)?.code ?? '';
  const name = (e as { name?: string })?.name ?? '';
  if (FULL.has(code) || name === 'EntityTooLarge' || name === 'QuotaExceeded') {
    return new ApiError(
      'INSUFFICIENT_STORAGE',
      'The storage is full; the upload was not stored. Retry later.',
      undefined,
      { 'retry-after': '60' },
    );
  }
  return new ApiError(
    'SERVICE_UNAVAILABLE',
    'The storage is unavailable; the upload was not stored. Retry shortly.',
    undefined,
    { 'retry-after': '5' },
  );
}
