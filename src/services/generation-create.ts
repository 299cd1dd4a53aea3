// Creating a render: price, then charge and enqueue in one statement (the ledger's charge), with the
// Idempotency-Key's replay, and the 202 body of the generation as it was then.
import crypto from 'node:crypto';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import { replayRow } from '../db/generations.ts';
import type { Catalog, CompiledModel } from '../domain/catalog-load.ts';
import { ApiError, invalidInput, type FieldProblem } from '../domain/errors.ts';
import { parseRenderRequest } from '../domain/inputs.ts';
import { priceOf } from '../domain/pricing.ts';
import { newId } from '../domain/ids.ts';
import { objectBody } from '../domain/body.ts';
import type { ResolvedInputs } from '../domain/catalog.ts';
import { literalAddressRefusal } from '../net/address-guard.ts';
import type { ChatMessage } from '../domain/chat.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { JobWake } from '../queue/job-wake.ts';
import { asks, INSUFFICIENT_MARK, type TestRenders } from '../queue/test-render.ts';
import { currentTraceParent, inSpan } from '../tracing/trace.ts';
import { generationView, type GenerationRow } from './generation-view.ts';
import type { Uploads } from './uploads.ts';
import type { KeyMode, KeyRecord } from './keys.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { budgetsOver, refusal } from './refusal.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';

/** How long a test render may stay queued before the janitor ends it (its process died first). */
const TEST_DEADLINE_SECONDS = 120;

export interface Created {
  body: Record<string, unknown>;
  location: string;
  replayed: boolean;
}

/**
 * Who pays for a create: an API key, or (id null) the account itself in the studio, with no daily
 * cap. A test key (`mode` 'test') pays nothing; without `mode` the payer is live. Made from the
 * principal.
 */
export type Payer = Pick<KeyRecord, 'accountId' | 'dailyCapCents'> & {
  id: string | null;
  mode?: KeyMode;
};

export interface GenerationCreateOptions {
  db: Db;
  catalog: Catalog;
  config: Config;
  /** Charges and test records (the ledger's). */
  ledger: Ledger;
  metrics?: Metrics;
  /** Makes the results of test keys' renders (API processes). */
  testRenders?: TestRenders;
  /** Wakes workers after a create. */
  jobs?: JobWake;
  uploads?: Uploads;
}

/** Canonical JSON (sorted keys) so that the same body always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export class GenerationCreate {
  constructor(private o: GenerationCreateOptions) {}

  /**
   * Quote and create: image inputs given as upload addresses must be uploads of this account, still
   * kept (a quote is part of seeing the models: Uploads.checkInputs).
   */
  async checkUploads(
    p: Principal,
    model: Parameters<Uploads['uploadInputs']>[0],
    inputs: Parameters<Uploads['uploadInputs']>[1],
  ) {
    const named = this.o.uploads?.uploadInputs(model, inputs);
    if (named && named.size > 0) await this.o.uploads!.checkInputs(p, named);
  }

  /**
   * An image URL that names a private address literally can never be fetched: 400 naming its field
   * now, rather than a charge and its refund (a host name is checked when the render resolves it, and
   * this account's upload addresses are read from storage, never fetched).
   */
  checkAddresses(model: CompiledModel, inputs: ResolvedInputs) {
    if (this.o.config.allowPrivateUrls) return;
    const uploads = `${this.o.config.publicUrl}/v1/uploads/`;
    const problems: FieldProblem[] = [];
    for (const f of model.def.fields) {
      const v = inputs[f.name];
      if (f.type !== 'url' || typeof v !== 'string' || v.startsWith(uploads)) continue;
      const why = literalAddressRefusal(v);
      if (why) problems.push({ field: `inputs.${f.name}`, message: why });
    }
    if (problems.length > 0) throw invalidInput(problems);
  }

  private location(id: string) {
    return `${this.o.config.publicUrl}/v1/generations/${id}`;
  }

  /**
   * A render started by `p` (a key, or a member in the studio). `opts.messages`: a chat request's
   * conversation (/openai/v1), stored with the render, and `opts.responseFormat` its output format
   * for a chat server (migrations/034); idempotency covers both.
   */
  async create(
    p: Principal,
    body: unknown,
    idempotencyKey: string,
    {
      messages,
      responseFormat,
    }: { messages?: ChatMessage[]; responseFormat?: Record<string, unknown> } = {},
  ): Promise<Created> {
    const accountId = accountFor(p, 'renders.create');
    const key: Payer =
      p.kind === 'key'
        ? { accountId, id: p.keyId, dailyCapCents: p.dailyCapCents, mode: p.mode }
        : { accountId, id: null, dailyCapCents: null };
    const { model, inputs } = parseRenderRequest(this.o.catalog, objectBody(body));
    this.checkAddresses(model, inputs);
    const cost = priceOf(model, inputs);
    await this.checkUploads(p, model, inputs);
    const requestHash = crypto
      .createHash('sha256')
      .update(
        canonical(
          messages ? { body, messages, ...(responseFormat ? { responseFormat } : {}) } : body,
        ),
      )
      .digest();
    const def = model.def;
    const id = newId('gen');
    const mode = key.mode ?? 'live';
    const test = mode === 'test';
    // The create's span: its traceparent goes on the row, the worker's spans' parent (docs/operations.md).
    const span = { attributes: { 'rendergate.generation_id': id, 'rendergate.model_id': def.id } };
    // A test render's result at hand: recorded by the create itself, final at once (the ledger's
    // test record, src/ledger/sql/create_generations.sql).
    const out = test ? this.o.testRenders?.resultNow(def.id, inputs) : null;
    const item = {
      id,
      accountId: key.accountId,
      keyId: key.id,
      idempotencyKey,
      requestHash,
      modelId: def.id,
      inputs,
      cost,
      dailyCapCents: key.dailyCapCents,
      personId: p.kind === 'member' ? p.personId : null,
      deadlineSeconds: test ? TEST_DEADLINE_SECONDS : def.timeLimitSeconds * def.maxAttempts + 3600,
    };
    // The traceparent is read inside the create's span: the worker's spans are its children.
    const made = await inSpan('generation.create', span, () =>
      test
        ? this.o.ledger.recordTest(
            {
              ...item,
              traceParent: currentTraceParent(),
              short: asks(inputs, INSUFFICIENT_MARK),
              ...(out
                ? { testResult: { out, keepSeconds: this.o.config.outputRetentionSeconds } }
                : {}),
            },
            messages,
            responseFormat,
          )
        : this.o.ledger.charge(
            { ...item, traceParent: currentTraceParent() },
            messages,
            responseFormat,
          ),
    );
    switch (made.outcome) {
      case 'refused':
        throw await refusal(this.o.db, this.o.config.dayTimeZone, {
          key,
          cost,
          short: test && asks(inputs, INSUFFICIENT_MARK),
          budgets: budgetsOver(made.inputs),
        });
      case 'in_use':
        throw new ApiError(
          'IDEMPOTENCY_KEY_IN_USE',
          'A request with this Idempotency-Key is still being processed; retry shortly.',
        );
      case 'reused':
        throw new ApiError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used before with a different body.',
        );
      case 'replayed':
        return {
          body: await this.createdView(made.generation_id!),
          location: this.location(made.generation_id!),
          replayed: true,
        };
      case 'created':
      case 'created_final':
        // The 202 body is the generation as created, queued (docs/api.md); a test render created
        // final was made in the same instant, else this process makes it at once (no worker, no
        // backend). Either way it is first in no queue.
        if (test) {
          if (made.outcome === 'created')
            this.o.testRenders?.start({
              id,
              modelId: def.id,
              inputs: made.inputs as typeof inputs,
            });
        } else {
          this.o.jobs?.send('created', { id, modelId: def.id });
          this.o.metrics?.chargedCents.inc(cost);
        }
        return {
          body: this.queuedView({
            id,
            model_id: def.id,
            inputs: made.inputs!,
            cost_cents: cost,
            created_at: made.created_at!,
            queue_position: test ? 1 : made.queue_position,
            mode,
          }),
          location: this.location(id),
          replayed: false,
        };
    }
  }

  /** The 202 body of a create: the generation as it was then, queued with nothing refunded. */
  private queuedView(
    g: Pick<
      GenerationRow,
      'id' | 'model_id' | 'inputs' | 'cost_cents' | 'created_at' | 'queue_position' | 'mode'
    >,
  ) {
    return generationView(
      {
        ...g,
        status: 'queued',
        refunded_cents: 0,
        content_key: null,
        content_type: null,
        text_output: null,
        error_code: null,
        error_message: null,
        started_at: null,
        completed_at: null,
      },
      this.o.config.publicUrl,
    );
  }

  /**
   * A replay's 202 body, rebuilt from its generation, its queue position included: the renders of its
   * model created before it and neither started nor finished at its creation, read from their times
   * (a replay is rare; the scan is bounded to the rows created shortly before it).
   */
  private async createdView(id: string) {
    const g = (await replayRow(this.o.db, id)) as GenerationRow;
    // A test render was first in no queue when created (as its first answer said).
    return this.queuedView(g.mode === 'test' ? { ...g, queue_position: 1 } : g);
  }
}
