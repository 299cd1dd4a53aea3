// The create of a render: parse and price the request, check its uploads, then charge and enqueue
// it through the ledger (services/ledger.ts charge: one call of the create function, batched), and
// answer 202 with the generation as it was then, or the contract's refusal.
import crypto from 'node:crypto';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import { replayRow } from '../db/generations.ts';
import { balanceOf } from '../db/accounts.ts';
import { spentToday } from '../db/key-day-usage.ts';
import type { AfterCommitNotifier } from '../db/notify-after-commit.ts';
import { objectBody } from '../domain/body.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ChatMessage } from '../domain/chat.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { parseRenderRequest } from '../domain/inputs.ts';
import { priceOf } from '../domain/pricing.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { generationView, type GenerationRow } from './generation-view.ts';
import type { KeyRecord } from './keys.ts';
import type { Ledger } from './ledger.ts';
import type { Uploads } from './uploads.ts';

export interface Created { body: Record<string, unknown>; location: string; replayed: boolean }

/**
 * Who pays for a create: an API key, or (id null) the account itself in the studio, with no daily
 * cap.
 */
export type Payer = Pick<KeyRecord, 'accountId' | 'dailyCapCents'> & { id: string | null };

/** Canonical JSON (sorted keys) so that the same body always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const members = Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(v);
}

export interface CreatorOptions {
  db: Db;
  catalog: Catalog;
  config: Config;
  ledger: Ledger;
  metrics?: Metrics;
  /** Wakes workers after a create. */
  jobs?: AfterCommitNotifier;
  uploads?: Uploads;
}

export class GenerationCreator {
  private db: Db;
  private catalog: Catalog;
  private config: Config;
  private ledger: Ledger;
  private metrics?: Metrics;
  private jobs?: AfterCommitNotifier;
  private uploads?: Uploads;

  constructor(o: CreatorOptions) {
    ({ db: this.db, catalog: this.catalog, config: this.config, ledger: this.ledger } = o);
    ({ metrics: this.metrics, jobs: this.jobs, uploads: this.uploads } = o);
  }

  /**
   * Quote and create: image inputs given as upload addresses must be uploads of this account, still
   * kept.
   */
  async checkUploads(accountId: string, model: Parameters<Uploads['uploadInputs']>[0],
    inputs: Parameters<Uploads['uploadInputs']>[1]) {
    const named = this.uploads?.uploadInputs(model, inputs);
    if (named && named.size > 0) await this.uploads!.checkInputs(accountId, named);
  }

  private location(id: string) {
    return `${this.config.publicUrl}/v1/generations/${id}`;
  }

  /** `opts.messages`: a chat request's conversation (/openai/v1), stored with the render. */
  async create(key: Payer, body: unknown, idempotencyKey: string,
    { messages }: { messages?: ChatMessage[] } = {}): Promise<Created> {
    const { model, inputs } = parseRenderRequest(this.catalog, objectBody(body));
    const cost = priceOf(model, inputs);
    await this.checkUploads(key.accountId, model, inputs);
    // Idempotency covers the conversation too.
    const hashed = canonical(messages ? { body, messages } : body);
    const requestHash = crypto.createHash('sha256').update(hashed).digest();
    const def = model.def;
    const id = newId('gen');
    const made = await this.ledger.charge({
      id, ledgerId: newId('led'), accountId: key.accountId, keyId: key.id, idempotencyKey,
      requestHash,
      modelId: def.id, inputs, cost, deadlineSeconds: def.timeLimitSeconds * def.maxAttempts + 3600,
      dailyCapCents: key.dailyCapCents,
    }, messages);
    switch (made.outcome) {
      case 'refused':
        throw await this.refusal(key, cost);
      case 'in_use':
        throw new ApiError('IDEMPOTENCY_KEY_IN_USE',
          'A request with this Idempotency-Key is still being processed; retry shortly.');
      case 'reused':
        throw new ApiError('IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used before with a different body.');
      case 'replayed':
        return {
          body: await this.createdView(made.generation_id!),
          location: this.location(made.generation_id!), replayed: true,
        };
      case 'created':
        this.jobs?.send('created');
        this.metrics?.chargedCents.inc(cost);
        return {
          body: this.queuedView({
            id, model_id: def.id, inputs: made.inputs!, cost_cents: cost,
            created_at: made.created_at!, queue_position: made.queue_position,
          }),
          location: this.location(id), replayed: false,
        };
    }
  }

  /** The 202 body of a create: the generation as it was then, queued with nothing refunded. */
  private queuedView(
    g: Pick<GenerationRow,
      'id' | 'model_id' | 'inputs' | 'cost_cents' | 'created_at' | 'queue_position'>,
  ) {
    return generationView({
      ...g, status: 'queued', refunded_cents: 0, content_key: null, content_type: null,
      text_output: null,
      error_code: null, error_message: null, started_at: null, completed_at: null,
    }, this.config.publicUrl);
  }

  /**
   * A replay's 202 body, rebuilt from its generation, its queue position included: the renders of
   * its model created before it and neither started nor finished at its creation, read from their
   * times (a replay is rare; the scan is bounded to the rows created shortly before it).
   */
  private async createdView(id: string) {
    return this.queuedView(await replayRow(this.db, id) as GenerationRow);
  }

  /**
   * Why a create was refused: a short balance (402) comes before a reached cap (409), as the
   * contract orders them.
   */
  private async refusal(key: Payer, cost: number): Promise<ApiError> {
    const balance = await balanceOf(this.db, key.accountId);
    // Without a key only the balance can refuse (a balance that moved back since is still the
    // reason).
    if (balance < cost || key.id === null) {
      return new ApiError('INSUFFICIENT_BALANCE',
        `This render costs ${cost} cents and the balance is ${balance} cents.`,
        [{ costCents: cost, balanceCents: balance }]);
    }
    const day = await spentToday(this.db, key.id, this.config.dayTimeZone);
    return new ApiError('API_KEY_DAILY_CAP',
      `This key's daily cap of ${key.dailyCapCents} cents would be exceeded.`, [{
        capCents: key.dailyCapCents, spentTodayCents: day.spent, costCents: cost,
        resetsAt: day.resetsAt.toISOString(),
      }]);
  }
}
