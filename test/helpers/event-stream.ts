// A client of a render's live events (GET /v1/generations/{id}/events) for tests: reads the
// server-sent events as they arrive (WHATWG HTML, "Server-sent events": blocks split by a blank
// line, `:` comment lines), so a test can wait for the next one, or see the stream end.
import http from 'node:http';
import { waitFor } from './wait.ts';

export interface SseEvent {
  event: string;
  id: string;
  data: string;
}

export interface OpenStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The JSON error of a refused stream. */
  json?: any;
  events: SseEvent[];
  comments: number;
  ended: boolean;
  /** Waits for the `n`th event (1-based) and answers it. */
  nth: (n: number, timeoutMs?: number) => Promise<SseEvent>;
  close: () => void;
}

export function openEvents(
  base: string,
  key: string,
  id: string,
  headers: Record<string, string> = {},
  /** Another address of the stream (the studio's, with a session cookie in `headers` and no key). */
  path = `/v1/generations/${id}/events`,
): Promise<OpenStream> {
  const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${base}${path}`,
      { headers: { ...auth, accept: 'text/event-stream', ...headers } },
      (res) => {
        const s: OpenStream = {
          status: res.statusCode!,
          headers: res.headers,
          events: [],
          comments: 0,
          ended: false,
          nth: (n, timeoutMs) =>
            waitFor(`event ${n}`, () => s.events[n - 1] ?? false, { timeoutMs, intervalMs: 5 }),
          close: () => req.destroy(),
        };
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const e: SseEvent = { event: 'message', id: '', data: '' };
            let isEvent = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) s.comments++;
              else {
                const [field, ...rest] = line.split(':');
                const value = rest.join(':').replace(/^ /, '');
                if (field === 'event' || field === 'id' || field === 'data') {
                  e[field] = value;
                  isEvent = true;
                }
              }
            }
            if (isEvent) s.events.push(e);
          }
        });
        res.on('end', () => {
          s.ended = true;
          if (s.status !== 200 && /json/.test(String(res.headers['content-type'])))
            s.json = buf ? JSON.parse(buf) : undefined;
        });
        res.on('error', () => (s.ended = true));
        res.on('close', () => (s.ended = true));
        if (s.status !== 200) res.on('end', () => resolve(s));
        else resolve(s);
      },
    );
    req.on('error', reject);
  });
}
