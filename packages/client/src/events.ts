// Following a render with its live events (GET /v1/generations/{id}/events, server-sent events):
// each `generation` event is the generation as GET answers it. A stream that breaks is opened
// again with Last-Event-ID (the server then sends the current state first if anything changed);
// after a few breaks, or when the server has no events (an older one) or will not stream now
// (429), the caller polls instead. No dependency: the format is a few lines (WHATWG HTML,
// "Server-sent events").
import { RendergateError, errorFromResponse } from './errors.js';
import type { Transport } from './transport.js';
import type { Generation } from './types.js';

export interface Followed {
  /** The final state, when the stream reached it. */
  final?: Generation;
  /** The last state seen. */
  last?: Generation;
  /** The server serves no live events: do not ask again. */
  unavailable?: boolean;
}

/** Streams broken this many times in a row: poll instead. */
const MAX_BREAKS = 3;
/** No byte (event or the server's 15 s comment) for this long: the stream is stalled. */
const IDLE_MS = 45_000;
const FINAL = new Set(['succeeded', 'failed', 'refunded']);

/** Calls `onEvent` with each event's data and id, from the body's lines. */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  onBytes: () => void,
  onEvent: (data: string, id: string | undefined) => boolean,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let data: string[] = [];
  let id: string | undefined;
  let type = 'message';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onBytes();
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (type === 'generation' && data.length > 0 && onEvent(data.join('\n'), id)) return;
          data = [];
          type = 'message';
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'data') data.push(v);
          else if (field === 'event') type = v;
          else if (field === 'id') id = v;
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Follows generation `id` until it is final, `deadline` (Date.now() time) passes or the stream
 * cannot be had; reports each state to `onProgress`. Throws what GET would (404 of an unknown
 * render) and the signal's reason when aborted.
 */
export async function followEvents(
  t: Transport,
  id: string,
  o: { signal?: AbortSignal; onProgress?: (g: Generation) => void; deadline: number },
): Promise<Followed> {
  const out: Followed = {};
  let lastId: string | undefined;
  for (let breaks = 0; breaks < MAX_BREAKS && Date.now() < o.deadline;) {
    o.signal?.throwIfAborted();
    const ac = new AbortController();
    const stop = () => ac.abort();
    o.signal?.addEventListener('abort', stop, { once: true });
    // (a timer longer than 2^31 - 1 ms fires at once: no deadline means none)
    const left = o.deadline - Date.now();
    const deadline = left < 2 ** 31 - 1 ? setTimeout(stop, Math.max(0, left)) : undefined;
    let idle = setTimeout(stop, IDLE_MS);
    const headers: Record<string, string> = {
      authorization: `Bearer ${t.opts.apiKey}`,
      accept: 'text/event-stream',
    };
    if (lastId !== undefined) headers['last-event-id'] = lastId;
    if (t.opts.userAgent) headers['user-agent'] = t.opts.userAgent;
    try {
      const res = await t.opts.fetch(t.url(`/v1/generations/${encodeURIComponent(id)}/events`), {
        headers,
        signal: ac.signal,
      });
      if (!res.ok) {
        const err = await errorFromResponse(res);
        if ([405, 406, 501].includes(res.status) || err.code === 'NOT_FOUND')
          return { ...out, unavailable: true };
        if (res.status === 429 || res.status === 503) return out; // poll this time
        throw err;
      }
      let progressed = false;
      await readEvents(
        res.body!,
        () => {
          clearTimeout(idle);
          idle = setTimeout(stop, IDLE_MS);
        },
        (data, eventId) => {
          const g = JSON.parse(data) as Generation;
          out.last = g;
          lastId = eventId;
          progressed = true;
          o.onProgress?.(g);
          if (FINAL.has(g.status)) out.final = g;
          return out.final !== undefined;
        },
      );
      o.signal?.throwIfAborted();
      if (out.final) return out;
      breaks = progressed ? 1 : breaks + 1; // ended early (a restart): open it again
    } catch (e) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (e instanceof RendergateError) throw e;
      breaks++;
    } finally {
      clearTimeout(deadline);
      clearTimeout(idle);
      o.signal?.removeEventListener('abort', stop);
    }
  }
  return out;
}
