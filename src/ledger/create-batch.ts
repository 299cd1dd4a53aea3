// Group commit for creates, the ledger's charge and test record: every create waiting in this
// process goes to the database in one call of rendergate_create_generations
// (sql/create_generations.sql), one transaction and one commit. A create arriving while fewer than
// MAX_IN_FLIGHT batches are out goes at once, alone if it is alone, so a quiet API adds no latency;
// under load the creates that arrived meanwhile share the next batch's round trip and WAL flush.
// Each create in a batch is decided on its own (see the function), live and test ones alike; a
// batch that fails as a whole (the database is away) fails each of its creates with that error,
// having written nothing.
import type { Db } from '../db/pool.ts';
import type { TestOutput } from '../db/generations-test.ts';
import { QUEUE_POSITION_CAP } from '../db/generations.ts';
import { createGenerations, createGenerationWithMessages } from './create-statements.ts';

export interface CreateItem {
  id: string;
  ledgerId: string;
  accountId: string;
  keyId: string | null;
  idempotencyKey: string;
  requestHash: Buffer;
  modelId: string;
  inputs: Record<string, unknown>;
  cost: number;
  deadlineSeconds: number;
  dailyCapCents: number | null;
  /**
   * The studio member who starts it (a person's id): counted in their budget and named as who
   * started it; a key's create leaves it out (its creator's budget counts it).
   */
  personId?: string | null;
  /** A test key's create: its test record; `short`: refused as for a short balance. */
  mode?: 'live' | 'test';
  short?: boolean;
  /** The W3C traceparent of the create's span (src/tracing/), stored on the row for the worker. */
  traceParent?: string | null;
  /**
   * A test item's result, at hand when it is created: it is created final with it
   * (outcome 'created_final') unless its account has an endpoint for the events of a change.
   * `keepSeconds`: how long a file is kept (0: forever).
   */
  testResult?: { out: TestOutput; keepSeconds: number };
}

export interface CreateOutcome {
  /** 'created_final': created already final with its `testResult` (nothing left to make). */
  outcome: 'created' | 'created_final' | 'replayed' | 'reused' | 'in_use' | 'refused';
  generation_id: string | null;
  inputs: Record<string, unknown> | null;
  created_at: Date | null;
  /** Its queue position when created (outcome 'created'). */
  queue_position?: number | null;
}

/** An item as rendergate_create_generations reads it. */
const row = (x: CreateItem, i: number) => ({
  i,
  id: x.id,
  ledger_id: x.ledgerId,
  account_id: x.accountId,
  key_id: x.keyId,
  idem: x.idempotencyKey,
  hash: x.requestHash.toString('hex'),
  model_id: x.modelId,
  inputs: x.inputs,
  cost: x.cost,
  deadline_s: x.deadlineSeconds,
  cap: x.dailyCapCents,
  mode: x.mode ?? 'live',
  short: x.short ?? false,
  ...(x.personId ? { person_id: x.personId } : {}),
  ...(x.traceParent ? { trace_parent: x.traceParent } : {}),
  ...(x.testResult ? resultFields(x.testResult) : {}),
});

/** A test item's result as the function reads it. */
function resultFields({ out, keepSeconds }: NonNullable<CreateItem['testResult']>) {
  return out.kind === 'text'
    ? { out_text: out.text }
    : {
        out_key: out.key,
        out_ct: out.contentType,
        out_bytes: out.bytes,
        out_etag: out.etag,
        keep_s: keepSeconds,
      };
}

interface Waiting {
  item: CreateItem;
  resolve: (o: CreateOutcome) => void;
  reject: (e: unknown) => void;
}

/** Batches in flight at once: enough to overlap one batch's flush with the next one's work. */
const MAX_IN_FLIGHT = 2;
/** The largest batch: bounds one transaction's locks and its statement's size. */
const MAX_BATCH = 64;

export class CreateBatcher {
  private waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private db: Db,
    private timeZone: string,
  ) {}

  submit(item: CreateItem): Promise<CreateOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.send();
    });
  }

  private send() {
    while (this.inFlight < MAX_IN_FLIGHT && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      this.inFlight++;
      // Nobody waits for the batch as a whole: run() settles each item's own promise, which its
      // caller awaits.
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.send();
      });
    }
  }

  /**
   * One create whose chat messages (migrations/016) are written in the same statement, so that they
   * exist as soon as the render can be claimed: one round trip, as a batch of one.
   */
  async submitWithMessages(
    item: CreateItem,
    messages: unknown[],
    responseFormat?: object,
  ): Promise<CreateOutcome> {
    const rows = await createGenerationWithMessages<CreateOutcome>(
      this.db,
      JSON.stringify([row(item, 0)]),
      this.timeZone,
      [item.modelId],
      JSON.stringify(messages),
      responseFormat ? JSON.stringify(responseFormat) : null,
    );
    return rows[0];
  }

  /** The batch's one statement. */
  private query(items: ReturnType<typeof row>[]) {
    return createGenerations<CreateOutcome & { idx: number }>(
      this.db,
      JSON.stringify(items),
      this.timeZone,
      items.map((x) => x.model_id),
    );
  }

  private async run(batch: Waiting[]): Promise<void> {
    const items = batch.map(({ item }, i) => row(item, i));
    try {
      const rows = await this.query(items);
      // Renders of the same model created earlier in this batch are ahead too.
      const created = rows
        .filter((r) => r.outcome === 'created')
        .sort((x, y) => (x.generation_id! < y.generation_id! ? -1 : 1));
      const before = new Map<string, number>();
      for (const r of created) {
        const model = items[r.idx].model_id;
        const n = before.get(model) ?? 0;
        r.queue_position = Math.min(QUEUE_POSITION_CAP, r.queue_position! + n);
        before.set(model, n + 1);
      }
      for (const r of rows) batch[r.idx].resolve(r);
      // Every item gets exactly one row; anything else is a bug, not a refusal.
      if (rows.length !== batch.length)
        throw new Error(`create batch answered ${rows.length} of ${batch.length} items`);
    } catch (e) {
      for (const w of batch) w.reject(e); // no effect on the ones already resolved
    }
  }
}
