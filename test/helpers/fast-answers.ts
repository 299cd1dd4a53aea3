// Two services on one database, one with the fast answers (src/http/fast-answers.ts) and one without
// (RENDERGATE_NO_FAST_ANSWERS), and what their tests compare: answers as raw as fetch gives them, the
// access lines the fast one writes, and its request metrics.
import { Writable } from 'node:stream';
import pino from 'pino';
import { fastAnswersOf } from '../../src/http/server.ts';
import { freshDatabase } from './db.ts';
import { startTestService, type TestService } from './service.ts';

export interface FastAndSlow {
  fast: TestService;
  slow: TestService;
  /** The fast service's log lines, parsed. */
  lines: Record<string, unknown>[];
  stop: () => Promise<void>;
}

export async function fastAndSlow(fastEnv: Record<string, string> = {}): Promise<FastAndSlow> {
  const dbh = await freshDatabase();
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const fast = await startTestService(dbh.url, {
    logger: pino({ level: 'info' }, sink),
    env: fastEnv,
  });
  const slow = await startTestService(dbh.url, { env: { RENDERGATE_NO_FAST_ANSWERS: '1' } });
  return {
    fast,
    slow,
    lines,
    stop: async () => {
      await fast.stop();
      await slow.stop();
      await dbh.drop();
    },
  };
}

export interface Answer {
  status: number;
  headers: Array<[string, string]>;
  text: string;
}

/** One answer, as raw as fetch gives it: status, header names and values in order, body. */
export async function answerOf(r: Response): Promise<Answer> {
  return { status: r.status, headers: [...r.headers.entries()], text: await r.text() };
}

/**
 * What may differ between two services: the date, our request ids, the rate limit's remaining, and
 * the service's own address (`base`) in a body.
 */
export function normal(a: Answer, base?: string) {
  const ids = /req_[0-9a-f]{24}/g;
  const text = a.text.replace(ids, 'req_*');
  return {
    status: a.status,
    headers: a.headers
      .filter(([k]) => k !== 'date')
      .map(([k, v]) => [k, v.replace(ids, 'req_*').replace(/r=\d+;t=\d+/, 'r=*;t=*')]),
    text: base ? text.replaceAll(base, 'BASE') : text,
  };
}

/** Requests answered by the fast answers of `s` so far. */
export const answered = (s: TestService) => fastAnswersOf(s.running.server)?.answered ?? 0;

/** The `request completed` line of an answer, by its request id. */
export function accessLineOf(lines: Record<string, unknown>[], a: Answer) {
  const id = a.headers.find(([k]) => k === 'x-request-id')![1];
  return lines.find((l) => l.reqId === id && l.msg === 'request completed')!;
}

/** The request counter of one route, method and status in the service's metrics. */
export async function requestCount(base: string, route: string, method: string, status: number) {
  const metrics = await (await fetch(base + '/metrics')).text();
  const line = metrics
    .split('\n')
    .find(
      (l) =>
        l.startsWith('rendergate_http_requests_total{') &&
        l.includes(`route="${route}"`) &&
        l.includes(`method="${method}"`) &&
        l.includes(`status="${status}"`),
    );
  return Number(line?.split(' ').pop());
}
