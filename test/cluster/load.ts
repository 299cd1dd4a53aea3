// Client side of the cluster test: requests spread over the API processes (failing over to another one
// while a process restarts, as a load balancer would), a bounded-concurrency runner, and a sampler of
// the database's running renders.
import pg from 'pg';

export interface Answer {
  status: number;
  headers: Headers;
  json: any;
  api: number;
}

export interface Call {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * Sends to API `prefer` (mod the number of APIs). A refused connection or a 503 (a process closing)
 * is retried on the next API, the way a load balancer retries an idempotent request; anything else
 * is the answer.
 */
export function cluster(bases: () => string[]) {
  return async function call(
    prefer: number,
    method: string,
    path: string,
    o: Call = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    let last: unknown;
    for (let attempt = 0, until = Date.now() + 30_000; Date.now() < until; attempt++) {
      const list = bases();
      const api = (prefer + attempt) % list.length;
      try {
        const res = await fetch(list[api] + path, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        if (res.status === 503) {
          last = new Error(`503 ${text}`);
          await sleep(50);
          continue;
        }
        let json: any;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        return { status: res.status, headers: res.headers, json, api };
      } catch (e) {
        last = e;
        await sleep(50);
      }
    }
    throw new Error(`no API answered ${method} ${path}: ${String(last)}`);
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` over `items`, at most `concurrency` at once, keeping the order of results. */
export async function runPool<T, R>(
  items: T[],
  concurrency: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/**
 * Counts, every few milliseconds, the renders of `modelId` holding a live lease (running, as the
 * claimer counts them), on a connection of its own; `stop()` returns the samples' maximum and count.
 */
export async function sampleRunning(url: string, modelId: string, everyMs = 5) {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {
    /* surfaces as a failed query */
  });
  await c.connect();
  let stopped = false;
  let max = 0;
  let samples = 0;
  let busy = 0;
  let failure: Error | null = null;
  const loop = (async () => {
    while (!stopped && failure === null) {
      const { rows } = await c.query(
        `SELECT count(*)::int AS n FROM generations WHERE model_id = $1 AND status = 'queued' AND lease_until >= now()`,
        [modelId],
      );
      max = Math.max(max, rows[0].n);
      if (rows[0].n > 0) busy++;
      samples++;
      await sleep(everyMs);
    }
  })().catch((e: unknown) => {
    failure = e instanceof Error ? e : new Error(String(e));
  });
  return {
    stop: async () => {
      stopped = true;
      await loop;
      await c.end().catch(() => undefined);
      if (failure) throw failure;
      return { max, samples, busy };
    },
  };
}
