// The Rendergate client: one object per key and server, fetch only (Node ≥ 20, Bun, Deno, browsers
// behind a proxy that adds the key).
import { RendergateError } from './errors.js';
import { Generations, isFinal } from './generations.js';
import { paged, type PagedList } from './pages.js';
import { Transport } from './transport.js';
import type {
  Deleted,
  Generation,
  InputsOf,
  Me,
  Model,
  ModelDetail,
  ModelId,
  Page,
  Quote,
  Upload,
  Usage,
  UsageGroup,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreate,
} from './types.js';

export interface ClientOptions {
  /** Default: RENDERGATE_API_KEY. */
  apiKey?: string;
  /** The server's origin, without /v1. Default: RENDERGATE_BASE_URL, else http://localhost:8080. */
  baseUrl?: string;
  /** Retries of a failed attempt (network error, 429, 503). Default 3. */
  maxRetries?: number;
  /** Time limit of one attempt in milliseconds (plus any time the server is asked to hold it). Default 60 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface RunOptions {
  signal?: AbortSignal;
  onProgress?: (generation: Generation) => void;
  idempotencyKey?: string;
  timeoutMs?: number;
  /** On abort, cancel the generation so its charge is returned (default true). */
  cancelOnAbort?: boolean;
}

function env(name: string): string | undefined {
  const g = globalThis as {
    process?: { env?: Record<string, string | undefined> };
    Deno?: { env: { get(n: string): string | undefined } };
  };
  try {
    return g.process?.env?.[name] ?? g.Deno?.env.get(name);
  } catch {
    return undefined; // Deno without --allow-env
  }
}

export class Rendergate {
  readonly generations: Generations;
  readonly models: { list(): Promise<Model[]>; get(id: string): Promise<ModelDetail> };
  readonly uploads: {
    create(
      bytes: Blob | ArrayBuffer | Uint8Array,
      contentType: 'image/png' | 'image/jpeg' | 'image/webp',
    ): Promise<Upload>;
    get(id: string): Promise<Response>;
    delete(id: string): Promise<Deleted>;
    /** The account's live uploads (not deleted, not expired), newest first. */
    list(): PagedList<Upload>;
  };
  readonly webhookEndpoints: {
    create(body: WebhookEndpointCreate): Promise<WebhookEndpoint>;
    list(): PagedList<WebhookEndpoint>;
    get(id: string): Promise<WebhookEndpoint>;
    delete(id: string): Promise<Deleted>;
    deliveries(id: string): PagedList<WebhookDelivery>;
  };
  // A TypeScript `private`, not `#t`: a declaration with `#private` fails TS18028 under tsc's
  // default target (ES5) in the projects that import it.
  private readonly t: Transport;

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? env('RENDERGATE_API_KEY');
    if (!apiKey)
      throw new RendergateError({
        status: 0,
        code: 'API_KEY_MISSING',
        message: 'Give apiKey or set RENDERGATE_API_KEY.',
      });
    const t = (this.t = new Transport({
      apiKey,
      baseUrl: options.baseUrl ?? env('RENDERGATE_BASE_URL') ?? 'http://localhost:8080',
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 60_000,
    }));
    const id = (p: string, v: string) => `${p}/${encodeURIComponent(v)}`;
    this.generations = new Generations(t);
    this.models = {
      list: async () =>
        (await t.json<Page<Model>>({ method: 'GET', path: '/v1/models', idempotent: true })).data,
      get: (modelId) =>
        t.json<ModelDetail>({
          method: 'GET',
          path: '/v1/models/detail',
          query: { id: modelId },
          idempotent: true,
        }),
    };
    this.uploads = {
      // Not keyed: a repeat after a lost answer could store the image twice, so only 429/503 are retried.
      create: (bytes, contentType) =>
        t.json<Upload>({
          method: 'POST',
          path: '/v1/uploads',
          idempotent: false,
          body: bytes instanceof Blob ? bytes : new Blob([bytes as BlobPart]),
          headers: { 'content-type': contentType },
        }),
      get: (uploadId) =>
        t.send({ method: 'GET', path: id('/v1/uploads', uploadId), idempotent: true }),
      delete: (uploadId) =>
        t.json<Deleted>({ method: 'DELETE', path: id('/v1/uploads', uploadId), idempotent: true }),
      list: () =>
        paged((cursor) =>
          t.json<Page<Upload>>({
            method: 'GET',
            path: '/v1/uploads',
            query: { cursor },
            idempotent: true,
          }),
        ),
    };
    this.webhookEndpoints = {
      create: (body) =>
        t.json<WebhookEndpoint>({
          method: 'POST',
          path: '/v1/webhook-endpoints',
          json: body,
          idempotent: false,
        }),
      list: () =>
        paged((cursor) =>
          t.json<Page<WebhookEndpoint>>({
            method: 'GET',
            path: '/v1/webhook-endpoints',
            query: { cursor },
            idempotent: true,
          }),
        ),
      get: (endpointId) =>
        t.json<WebhookEndpoint>({
          method: 'GET',
          path: id('/v1/webhook-endpoints', endpointId),
          idempotent: true,
        }),
      delete: (endpointId) =>
        t.json<Deleted>({
          method: 'DELETE',
          path: id('/v1/webhook-endpoints', endpointId),
          idempotent: true,
        }),
      deliveries: (endpointId) =>
        paged((cursor) =>
          t.json<Page<WebhookDelivery>>({
            method: 'GET',
            path: `${id('/v1/webhook-endpoints', endpointId)}/deliveries`,
            query: { cursor },
            idempotent: true,
          }),
        ),
    };
  }

  /** The account and the key in use. */
  me(): Promise<Me> {
    return this.t.json<Me>({ method: 'GET', path: '/v1/me', idempotent: true });
  }

  /**
   * Renders and spend over a range of days (YYYY-MM-DD, both included, in the server's day time zone;
   * default the last 30), grouped by the dimensions given (none: one row of totals).
   */
  usage(options: { from?: string; to?: string; groupBy?: UsageGroup[] } = {}): Promise<Usage> {
    return this.t.json<Usage>({
      method: 'GET',
      path: '/v1/usage',
      query: {
        from: options.from,
        to: options.to,
        groupBy: options.groupBy?.length ? options.groupBy.join(',') : undefined,
      },
      idempotent: true,
    });
  }

  /** The price of a render (nothing is charged). */
  quote<M extends ModelId>(modelId: M, inputs: InputsOf<M>): Promise<Quote> {
    return this.t.json<Quote>({
      method: 'POST',
      path: '/v1/quote',
      json: { modelId, inputs },
      idempotent: true,
    });
  }

  /**
   * Creates a generation and waits until it is final. Resolves with it only when it succeeded; a failed
   * or refunded one throws a RendergateError carrying it. Aborting cancels it (unless cancelOnAbort is false).
   */
  async run<M extends ModelId>(
    modelId: M,
    inputs: InputsOf<M>,
    options: RunOptions = {},
  ): Promise<Generation> {
    // With nothing to report, interrupt or time out, the create itself may wait for the end (one round
    // trip for a quick render). Otherwise it answers at once: the queued state is reported, and an abort
    // knows the id it must cancel.
    const plain = !options.onProgress && !options.signal && options.timeoutMs === undefined;
    const created = await this.generations.create(modelId, inputs, {
      idempotencyKey: options.idempotencyKey,
      wait: plain ? 25 : undefined,
      signal: options.signal,
    });
    options.onProgress?.(created);
    let final: Generation;
    try {
      final = isFinal(created)
        ? created
        : await this.generations.wait(created.id, {
            signal: options.signal,
            onProgress: options.onProgress,
            timeoutMs: options.timeoutMs,
          });
    } catch (e) {
      if (options.signal?.aborted && options.cancelOnAbort !== false) {
        await this.generations
          .cancel(created.id, { signal: AbortSignal.timeout(10_000) })
          .catch(() => undefined);
      }
      throw e;
    }
    if (final.status === 'succeeded') return final;
    throw new RendergateError({
      status: 0,
      code: final.status === 'failed' ? 'GENERATION_FAILED' : 'GENERATION_REFUNDED',
      generation: final,
      message: `Generation ${final.id} ${final.status}${final.error ? `: ${final.error.code}: ${final.error.message}` : '.'}`,
    });
  }
}
