// A fake Cog model container speaking Cog's HTTP API, after replicate/cog `docs/http.md` and its server
// (`crates/coglet/src/transport/http/`, the Python `python/cog/server/http.py` before it):
// - `POST /predictions` `{ id, input }` without `Prefer: respond-async` is synchronous: 200 with the
//   final prediction `{ id, status, output, error, logs, metrics }`; a model exception is still 200 with
//   `status: "failed"`; the prediction is cancelled when the client disconnects.
// - all slots busy → 409 `{ error: "At capacity - all prediction slots busy", status: "failed" }`;
//   setup not done → 503; invalid input → 422 `{ detail: [{ loc, msg, type }] }`.
// - `POST /predictions/{id}/cancel` → 200 `{}` (404 `{}` when unknown).
// - `GET /health-check` → 200 `{ status: READY | BUSY | STARTING | SETUP_FAILED | … }`.
// - `GET /openapi.json` → the schema, with the model's inputs under `components.schemas.Input`.
// - file outputs are `data:<mime>;base64,…` (or URLs when the server runs with `--upload-url`).
// What a prediction does is chosen by the test through `behaviour`, one per prediction in order.
// Asynchronous predictions, the idempotent PUT and webhooks: test/fakes/cog-async.ts.
import crypto from 'node:crypto';
import type http from 'node:http';
import { listen, readBody, send, sleep } from './http-util.ts';
import { create as createAsync, type AsyncCog, type AsyncDeps, type State } from './cog-async.ts';

export type CogBehaviour =
  | { kind: 'ok'; ms?: number }
  | { kind: 'fail'; error?: string }
  | { kind: 'busy' }
  | { kind: 'unavailable' }
  | { kind: 'invalid' }
  | { kind: 'hang' }
  | { kind: 'die'; afterMs?: number }
  | { kind: 'malformed' }
  | { kind: 'wrong-type' }
  | { kind: 'url'; ms?: number };

export interface CogFake extends AsyncCog {
  base: string;
  /** The bytes every successful prediction answers with, and their type. */
  output: Buffer;
  contentType: string;
  /** Set to the health status `GET /health-check` reports. */
  status: string;
  /** Behaviours of the next predictions, taken in order; then `ok`. */
  script: CogBehaviour[];
  textOutput: string[] | null;
  predictions: {
    id: string;
    input: Record<string, unknown>;
    outcome: string;
    startedAt: number;
    endedAt?: number;
  }[];
  cancels: string[];
  /** Ids whose client went away before their answer. */
  disconnected: string[];
  inFlight: number;
  maxInFlight: number;
  delayMs: number;
  close: () => Promise<void>;
}

export const COG_INPUT_SCHEMA = {
  type: 'object',
  title: 'Input',
  required: ['prompt'],
  properties: {
    prompt: { type: 'string', title: 'Prompt', 'x-order': 0, description: 'What to draw' },
    steps: { type: 'integer', title: 'Steps', 'x-order': 2, default: 20, minimum: 1, maximum: 50 },
    scheduler: {
      allOf: [{ $ref: '#/components/schemas/scheduler' }],
      'x-order': 3,
      default: 'K_EULER',
    },
    image: { type: 'string', format: 'uri', title: 'Image', 'x-order': 1 },
    guidance: {
      type: 'number',
      title: 'Guidance',
      'x-order': 4,
      default: 7.5,
      minimum: 0,
      maximum: 20,
    },
    tile: { type: 'boolean', title: 'Tile', 'x-order': 5, default: false },
  },
};

export async function cogFake(
  opts: { output?: Buffer; contentType?: string; delayMs?: number } = {},
): Promise<CogFake> {
  const live = new Map<string, { cancel: () => void; state?: State }>();
  const fake = {
    output: opts.output ?? crypto.randomBytes(4096),
    contentType: opts.contentType ?? 'video/mp4',
    status: 'READY',
    script: [] as CogBehaviour[],
    textOutput: null as string[] | null,
    predictions: [] as CogFake['predictions'],
    cancels: [] as string[],
    disconnected: [] as string[],
    inFlight: 0,
    maxInFlight: 0,
    delayMs: opts.delayMs ?? 50,
    steps: 10,
    gate: Infinity,
    stepMs: 5,
    webhookIntervalMs: 500,
    loseWebhooks: false,
    webhooks: [] as AsyncCog['webhooks'],
    runs: new Map<string, number>(),
  } as CogFake;
  const asyncDeps: AsyncDeps = {
    cog: fake,
    live,
    record: (id, input) => {
      fake.predictions.push({
        id,
        input: input as Record<string, unknown>,
        outcome: 'async',
        startedAt: performance.now(),
      });
    },
    finish: async (state, cancelled) => {
      const b = fake.script.shift() ?? { kind: 'ok' };
      if (cancelled) return { ...state, status: 'canceled' };
      if (b.kind === 'fail')
        return { ...state, status: 'failed', error: b.error ?? 'CUDA out of memory' };
      const output =
        fake.textOutput ?? `data:${fake.contentType};base64,${fake.output.toString('base64')}`;
      return {
        ...state,
        status: 'succeeded',
        output,
        metrics: { predict_time: (fake.steps * fake.stepMs) / 1000 },
      };
    },
  };

  const prediction = (id: string, input: unknown, extra: Record<string, unknown>) => ({
    id,
    input,
    created_at: new Date().toISOString(),
    logs: ' 50%|█████     | 5/10 [00:01<00:01]\n100%|██████████| 10/10 [00:02<00:00]\n',
    metrics: { predict_time: fake.delayMs / 1000 },
    error: null,
    output: null,
    ...extra,
  });

  async function predict(req: http.IncomingMessage, res: http.ServerResponse) {
    const body = await readBody(req);
    const id: string = body?.id ?? crypto.randomUUID();
    const behaviour = fake.script.shift() ?? { kind: 'ok' };
    const record: CogFake['predictions'][number] = {
      id,
      input: body?.input ?? {},
      outcome: behaviour.kind,
      startedAt: performance.now(),
    };
    fake.predictions.push(record);
    if (behaviour.kind === 'busy')
      return send(
        res,
        409,
        { error: 'At capacity - all prediction slots busy', status: 'failed' },
        { 'retry-after': '0' },
      );
    if (behaviour.kind === 'unavailable')
      return send(res, 503, { detail: 'Setup has not finished' });
    if (behaviour.kind === 'invalid')
      return send(res, 422, {
        detail: [
          { loc: ['body', 'input', 'prompt'], msg: 'field required', type: 'value_error.missing' },
        ],
      });
    fake.inFlight++;
    fake.maxInFlight = Math.max(fake.maxInFlight, fake.inFlight);
    let cancelled = false;
    let finished = false;
    live.set(id, {
      cancel: () => {
        cancelled = true;
      },
    });
    // Cog cancels a synchronous prediction whose client disconnects.
    res.on('close', () => {
      if (!finished) {
        fake.disconnected.push(id);
        cancelled = true;
      }
    });
    try {
      if (behaviour.kind === 'hang') {
        while (!cancelled) await sleep(20);
      } else if (behaviour.kind === 'die') {
        await sleep(behaviour.afterMs ?? 50);
        req.socket.destroy();
        return;
      } else {
        for (
          const end =
            Date.now() +
            (('ms' in behaviour) && behaviour.ms !== undefined ? behaviour.ms : fake.delayMs);
          Date.now() < end && !cancelled;
        )
          await sleep(10);
      }
      finished = true;
      if (cancelled) return send(res, 200, prediction(id, record.input, { status: 'canceled' }));
      if (behaviour.kind === 'fail')
        return send(
          res,
          200,
          prediction(id, record.input, {
            status: 'failed',
            error: behaviour.error ?? 'CUDA out of memory',
          }),
        );
      if (behaviour.kind === 'malformed') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"id": "x", "status": "succ');
      }
      const type = behaviour.kind === 'wrong-type' ? 'text/html' : fake.contentType;
      const output =
        fake.textOutput ??
        (behaviour.kind === 'url'
          ? `${fake.base}/files/${id}`
          : `data:${type};base64,${fake.output.toString('base64')}`);
      return send(res, 200, prediction(id, record.input, { status: 'succeeded', output }));
    } finally {
      record.endedAt = performance.now();
      fake.inFlight--;
      live.delete(id);
    }
  }

  const { base, close } = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const cancel = /^\/predictions\/([^/]+)\/cancel$/.exec(url.pathname);
    const put = /^\/predictions\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'PUT' && put)
      return void createAsync(asyncDeps, req, res, decodeURIComponent(put[1])).catch(() =>
        res.destroy(),
      );
    if (
      req.method === 'POST' &&
      url.pathname === '/predictions' &&
      req.headers.prefer === 'respond-async'
    ) {
      return void createAsync(asyncDeps, req, res, null).catch(() => res.destroy());
    }
    if (req.method === 'POST' && url.pathname === '/predictions')
      return void predict(req, res).catch(() => res.destroy());
    if (req.method === 'POST' && cancel) {
      const id = decodeURIComponent(cancel[1]);
      fake.cancels.push(id);
      const p = live.get(id);
      if (!p) return send(res, 404, {});
      p.cancel();
      return send(res, 200, {});
    }
    if (req.method === 'GET' && url.pathname === '/health-check')
      return send(res, 200, { status: fake.status, setup: { status: 'succeeded' } });
    if (req.method === 'GET' && url.pathname === '/openapi.json') {
      return send(res, 200, {
        openapi: '3.0.2',
        info: { title: 'Cog', version: '0.1.0' },
        paths: {},
        components: {
          schemas: {
            Input: COG_INPUT_SCHEMA,
            scheduler: {
              title: 'scheduler',
              enum: ['DDIM', 'K_EULER', 'DPMSolverMultistep'],
              type: 'string',
            },
            Output: { type: 'string', format: 'uri', title: 'Output' },
          },
        },
      });
    }
    if (req.method === 'GET' && url.pathname.startsWith('/files/')) {
      res.writeHead(200, {
        'content-type': fake.contentType,
        'content-length': fake.output.length,
      });
      return res.end(fake.output);
    }
    send(res, 404, { detail: 'Not Found' });
  });
  fake.base = base;
  fake.close = close;
  return fake;
}
