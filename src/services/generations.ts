// Use cases of renders: create (price + charge + enqueue in one transaction), read, list, delete
// (cancel and refund a queued one), and the operator refund.
import crypto from 'node:crypto';
import type { Config } from '../config.ts';
import { transaction, type Db } from '../db/pool.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import { ApiError } from '../domain/errors.ts';
import { parseRenderRequest } from '../domain/inputs.ts';
import { priceOf } from '../domain/pricing.ts';
import { isId, newId } from '../ids.ts';
import { objectBody } from '../http/body.ts';
import type { Storage } from '../storage/storage.ts';
import { GENERATION_COLUMNS, generationView, type GenerationRow } from './generation-view.ts';
import type { KeyRecord } from './keys.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import { refundGeneration } from './refunds.ts';
import { dayUsage } from './day-usage.ts';
import { JOBS_CHANNEL, CANCEL_CHANNEL } from '../queue/channels.ts';
import type { Metrics } from '../metrics.ts';

export interface Created { body: Record<string, unknown>; location: string; replayed: boolean }

/** Canonical JSON (sorted keys) so that the same body always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export class Generations {
  constructor(private db: Db, private catalog: Catalog, private config: Config, private storage: Storage, private metrics?: Metrics) {}

  private location(id: string) {
    return `${this.config.publicUrl}/v1/generations/${id}`;
  }

  async create(key: KeyRecord, body: unknown, idempotencyKey: string): Promise<Created> {
    const { model, inputs } = parseRenderRequest(this.catalog, objectBody(body));
    const cost = priceOf(model, inputs);
    const requestHash = crypto.createHash('sha256').update(canonical(body)).digest();
    const def = model.def;
    const created = await transaction(this.db, async (tx): Promise<Created> => {
      // A second request with this key while the first is in its transaction: refuse rather than wait.
      const lock = await tx.query({ name: 'gen-idem-lock', text: 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok',
        values: [`idem:${key.accountId}:${idempotencyKey}`] });
      if (!lock.rows[0].ok) throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      const prior = await tx.query({ name: 'gen-idem-get', text: 'SELECT request_hash, response, generation_id FROM idempotency_keys WHERE account_id = $1 AND key = $2',
        values: [key.accountId, idempotencyKey] });
      if (prior.rows[0]) {
        if (!(prior.rows[0].request_hash as Buffer).equals(requestHash)) {
          throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used before with a different body.');
        }
        return { body: prior.rows[0].response, location: this.location(prior.rows[0].generation_id), replayed: true };
      }

      // The rows first, the contended locks last: the account's balance row and the key's day row are
      // held only from their guarded UPDATE to the commit, not through the inserts, so creates on one
      // account queue for the shortest time. Any refusal below rolls the whole transaction back.
      const id = newId('gen');
      const deadlineSeconds = def.timeLimitSeconds * def.maxAttempts + 3600;
      const { rows } = await tx.query({
        name: 'gen-insert',
        text: `INSERT INTO generations (id, account_id, key_id, usage_day, model_id, inputs, cost_cents, deadline_at)
               VALUES ($1, $2, $3, (now() AT TIME ZONE $8)::date, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING ${GENERATION_COLUMNS}`,
        values: [id, key.accountId, key.id, def.id, JSON.stringify(inputs), cost, deadlineSeconds, this.config.dayTimeZone],
      });
      const view = generationView(rows[0] as GenerationRow, this.config.publicUrl);
      if (cost > 0) {
        await tx.query({ name: 'gen-charge', text: `INSERT INTO ledger_entries (id, account_id, kind, amount_cents, generation_id) VALUES ($1, $2, 'charge', $3, $4)`,
          values: [newId('led'), key.accountId, cost, id] });
      }
      await tx.query({ name: 'gen-idem', text: 'INSERT INTO idempotency_keys (account_id, key, request_hash, generation_id, response) VALUES ($1, $2, $3, $4, $5)',
        values: [key.accountId, idempotencyKey, requestHash, id, JSON.stringify(view)] });
      // Delivered at commit: wakes a free worker at once, in this process or any other.
      await tx.query({ name: 'gen-notify', text: 'SELECT pg_notify($1, $2)', values: [JOBS_CHANNEL, def.id] });

      // Count the price against the key's day; the WHERE refuses an update that would pass the cap.
      const cap = key.dailyCapCents;
      const usage = cap !== null && cost > cap ? { rows: [] } : await tx.query({
        name: 'gen-usage',
        text: `INSERT INTO key_day_usage AS u (key_id, day, spent_cents) VALUES ($1, (now() AT TIME ZONE $2)::date, $3)
               ON CONFLICT (key_id, day) DO UPDATE SET spent_cents = u.spent_cents + EXCLUDED.spent_cents
                 WHERE $4::bigint IS NULL OR u.spent_cents + EXCLUDED.spent_cents <= $4::bigint
               RETURNING day`,
        values: [key.id, this.config.dayTimeZone, cost, cap],
      });
      const charged = usage.rows.length === 0 ? { rows: [] } : await tx.query({
        name: 'gen-balance',
        text: 'UPDATE accounts SET balance_cents = balance_cents - $2 WHERE id = $1 AND balance_cents >= $2 RETURNING balance_cents',
        values: [key.accountId, cost],
      });
      if (!charged.rows[0]) {
        // The contract answers a short balance (402) before a reached cap (409), whichever failed here.
        const { rows: acct } = await tx.query('SELECT balance_cents FROM accounts WHERE id = $1', [key.accountId]);
        const balance = (acct[0]?.balance_cents as number | undefined) ?? 0;
        if (balance < cost) {
          throw new ApiError('INSUFFICIENT_BALANCE', `This render costs ${cost} cents and the balance is ${balance} cents.`,
            [{ costCents: cost, balanceCents: balance }]);
        }
        const day = await dayUsage(tx, key.id, this.config.dayTimeZone);
        throw new ApiError('API_KEY_DAILY_CAP', `This key's daily cap of ${cap} cents would be exceeded.`, [{
          capCents: cap, spentTodayCents: day.spent, costCents: cost, resetsAt: day.resetsAt.toISOString(),
        }]);
      }
      return { body: view, location: this.location(id), replayed: false };
    });
    if (!created.replayed) this.metrics?.chargedCents.inc(cost);
    return created;
  }

  private async row(accountId: string, id: string): Promise<GenerationRow> {
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    const { rows } = await this.db.query({ name: 'gen-get',
      text: `SELECT ${GENERATION_COLUMNS} FROM generations WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`, values: [id, accountId] });
    if (!rows[0]) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    return rows[0] as GenerationRow;
  }

  async get(accountId: string, id: string) {
    return generationView(await this.row(accountId, id), this.config.publicUrl);
  }

  /** The stored file of a succeeded render, or the contract's 409/404. */
  async content(accountId: string, id: string) {
    const r = await this.row(accountId, id);
    if (r.status === 'queued') throw new ApiError('GENERATION_NOT_READY', 'The render has not finished yet; poll until it has.');
    if (r.status !== 'succeeded' || !r.content_key) throw new ApiError('CONTENT_NOT_FOUND', 'This generation has no file.');
    return { key: r.content_key, contentType: r.content_type as string, bytes: r.content_bytes as number, etag: r.content_etag as string };
  }

  async list(accountId: string, q: { limit: number; cursor: string | null; status: string | null; modelId: string | null }): Promise<Page<Record<string, unknown>>> {
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const { rows } = await this.db.query(
      `SELECT ${GENERATION_COLUMNS} FROM generations
       WHERE account_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR id < $2)
         AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR model_id = $4)
       ORDER BY id DESC LIMIT $5`, [accountId, after, q.status, q.modelId, q.limit + 1]);
    const data = rows.slice(0, q.limit).map((r) => generationView(r as GenerationRow, this.config.publicUrl));
    return { data, nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id as string) : null };
  }

  /** Deletes a render; a queued (waiting or running) one is cancelled and refunded in the same step. */
  async delete(accountId: string, id: string) {
    if (!isId('gen', id)) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
    let refunded: number | null = null;
    const contentKey = await transaction(this.db, async (tx) => {
      const { rows } = await tx.query(
        'SELECT status, content_key FROM generations WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE', [id, accountId]);
      if (!rows[0]) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
      if (rows[0].status === 'queued') {
        refunded = await refundGeneration(tx, id, 'queued', { status: 'refunded', code: 'CANCELLED', message: 'The render was cancelled by its owner.' });
        await tx.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, id]);
      }
      await tx.query('UPDATE generations SET deleted_at = now() WHERE id = $1', [id]);
      return rows[0].content_key as string | null;
    });
    if (refunded) this.metrics?.refundedCents.inc(refunded);
    if (contentKey) await this.purgeContent(id, contentKey);
    return { id, deleted: true };
  }

  /** Removes a file no longer served; the janitor retries whatever a crash left behind. */
  async purgeContent(id: string, key: string) {
    await this.storage.delete(key);
    await this.db.query('UPDATE generations SET content_key = NULL WHERE id = $1 AND content_key = $2', [id, key]);
  }

  async adminRefund(id: string) {
    const row = await transaction(this.db, async (tx) => {
      const ok = await refundGeneration(tx, id, 'succeeded', { status: 'refunded', code: 'REFUNDED_BY_OPERATOR', message: 'The charge was returned by the operator.' });
      const { rows } = await tx.query(`SELECT ${GENERATION_COLUMNS}, deleted_at FROM generations WHERE id = $1`, [id]);
      if (!rows[0] || rows[0].deleted_at) throw new ApiError('GENERATION_NOT_FOUND', 'No such generation.');
      if (ok === null) throw new ApiError('GENERATION_NOT_REFUNDABLE', `Only a succeeded render can be refunded; this one is ${rows[0].status}.`);
      this.metrics?.refundedCents.inc(ok);
      return rows[0] as GenerationRow;
    });
    if (row.content_key) await this.purgeContent(id, row.content_key).catch(() => undefined);
    return generationView({ ...row, content_key: null }, this.config.publicUrl);
  }
}
