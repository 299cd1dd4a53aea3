// The asynchronous half of the fake Cog container (test/fakes/cog.ts), after replicate/cog:
// - `docs/http.md`: `Prefer: respond-async` → 202 `{ id, status: "starting" }` and updates by webhook;
//   `PUT /predictions/{id}` is the idempotent create; webhooks at `start`, on `logs`/`output` (at
//   most every 500 ms, COG_THROTTLE_RESPONSE_INTERVAL) and at `completed`, filtered by
//   `webhook_events_filter`.
// - `crates/coglet/src/transport/http/routes.rs`: `should_respond_async` takes `Prefer` equal to
//   `respond-async` only; a PUT whose body `id` differs from the path is 422; a PUT for an id in flight
//   answers 202 with its current state (`get_prediction_response`: the state snapshot plus `input`),
//   whatever its headers; a prediction is forgotten (`remove_prediction`) as soon as it is final, so a
//   later PUT runs it again (synchronously without `Prefer: respond-async`, cancelled when that
//   client disconnects).
// - `crates/coglet/src/webhook.rs`: a POST of the prediction as JSON; non-terminal ones are fire and
//   forget; the terminal one is retried up to 12 times after 100 ms × 2^n on 429, 500, 502, 503, 504 or
//   a connection error, and given up on any other status.
// - `crates/coglet/src/prediction.rs`: the terminal webhook is sent from a spawned task while the
//   prediction is being forgotten (the two race).
// A model's progress is tqdm lines in `logs`: `{pct}%|{bar}| {n}/{total} [..]`.
import crypto from 'node:crypto';
import type http from 'node:http';
import { readBody, send, sleep } from './http-util.ts';

export type State = Record<string, unknown> & { id: string; status: string; logs: string };

export interface AsyncCog {
  /** Steps of each async prediction (tqdm total). */
  steps: number;
  /** Async predictions advance while their step is below this (a test releases them step by step). */
  gate: number;
  /** Milliseconds per step. */
  stepMs: number;
  /** Cog's throttle of non-terminal webhooks (500 ms by default; COG_THROTTLE_RESPONSE_INTERVAL). */
  webhookIntervalMs: number;
  /** Webhooks are lost on the way (as if the network dropped them): none arrives. */
  loseWebhooks: boolean;
  /** Every webhook sent: its URL, the prediction's status, and the answer's status (0: not delivered). */
  webhooks: { url: string; id: string; status: string; answer: number }[];
  /** Runs of each prediction id (a PUT after Cog forgot a final prediction runs it again). */
  runs: Map<string, number>;
}

export interface AsyncDeps {
  cog: AsyncCog;
  live: Map<string, { cancel: () => void; state?: State }>;
  /** The final state of a run that was not cancelled: its output or failure, as the fake's script says. */
  finish: (state: State, cancelled: boolean) => Promise<State>;
  record: (id: string, input: unknown) => void;
}

async function post(cog: AsyncCog, url: string, state: State): Promise<number> {
  const entry = { url, id: state.id, status: state.status, answer: 0 };
  cog.webhooks.push(entry);
  if (cog.loseWebhooks) return 0;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(state),
    });
    await res.body?.cancel();
    entry.answer = res.status;
    return res.status;
  } catch {
    return 0;
  }
}

/** The terminal webhook, retried as coglet's `send_terminal` does. */
async function terminal(cog: AsyncCog, url: string, state: State): Promise<void> {
  for (let attempt = 0; attempt <= 12; attempt++) {
    const status = await post(cog, url, state);
    if (status >= 200 && status < 300) return;
    if (status !== 0 && ![429, 500, 502, 503, 504].includes(status)) return;
    if (cog.loseWebhooks) return; // lost for good: a partition outlasting the retries
    await sleep(100 * 2 ** Math.min(attempt + 1, 10));
  }
}

/** Runs one prediction, reporting to `webhook`; resolves with its final state. */
export async function run(
  d: AsyncDeps,
  id: string,
  input: unknown,
  webhook: string | undefined,
): Promise<State> {
  const { cog } = d;
  cog.runs.set(id, (cog.runs.get(id) ?? 0) + 1);
  d.record(id, input);
  let cancelled = false;
  const state: State = {
    id,
    input,
    status: 'starting',
    logs: '',
    output: null,
    error: null,
    created_at: new Date().toISOString(),
  };
  d.live.set(id, {
    cancel: () => {
      cancelled = true;
    },
    state,
  });
  let lastSent = 0;
  const update = () => {
    if (!webhook || performance.now() - lastSent < cog.webhookIntervalMs) return;
    lastSent = performance.now();
    void post(cog, webhook, { ...state });
  };
  if (webhook) void post(cog, webhook, { ...state });
  state.status = 'processing';
  for (let step = 1; step <= cog.steps && !cancelled;) {
    if (step > cog.gate) {
      await sleep(10);
      continue;
    }
    await sleep(cog.stepMs);
    const pct = Math.round((100 * step) / cog.steps);
    const bar = '█'.repeat(Math.floor(pct / 10)).padEnd(10, ' ');
    // tqdm rewrites its line with \r on a terminal; in a log each update may also end in \n.
    state.logs += `${String(pct).padStart(3)}%|${bar}| ${step}/${cog.steps} [00:0${step % 10}<00:00, 9.9it/s]${step % 2 ? '\r' : '\n'}`;
    update();
    step++;
  }
  const final = await d.finish(state, cancelled);
  d.live.delete(id); // forgotten at once; the terminal webhook goes from its own task
  if (webhook) void terminal(cog, webhook, { ...final });
  return final;
}

/** `PUT /predictions/{id}` and `POST /predictions` with `Prefer: respond-async`. */
export async function create(
  d: AsyncDeps,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathId: string | null,
): Promise<void> {
  const body = await readBody(req);
  if (pathId !== null && body?.id !== undefined && body.id !== pathId) {
    return send(res, 422, {
      detail: [
        {
          loc: ['body', 'id'],
          msg: 'prediction ID must match the ID supplied in the URL',
          type: 'value_error',
        },
      ],
    });
  }
  const id: string = pathId ?? body?.id ?? crypto.randomUUID();
  const inFlight = d.live.get(id);
  if (pathId !== null && inFlight) return send(res, 202, { ...inFlight.state, id });
  const webhook = typeof body?.webhook === 'string' ? body.webhook : undefined;
  if (req.headers.prefer === 'respond-async') {
    void run(d, id, body?.input ?? {}, webhook);
    return send(res, 202, { id, status: 'starting' });
  }
  // Synchronous: answered when final; a client that goes away cancels it.
  let done = false;
  res.on('close', () => {
    if (!done) d.live.get(id)?.cancel();
  });
  const final = await run(d, id, body?.input ?? {}, webhook);
  done = true;
  if (!res.destroyed) send(res, 200, final);
}
