// The access line put together by hand must be the very line pino writes through its generic path with
// Fastify's serializers, for every kind of request (odd URLs, an Accept-Version header, a 404, a handler that throws), and a
// logger this line could not honour must get pino's own path.
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AccessLog, plainPino } from '../../../src/http/access-log.ts';

/** A server whose access lines are collected; `fast` false forces pino's generic path. */
async function serve(opts: pino.LoggerOptions, fast?: boolean) {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(...String(chunk).split('\n').filter(Boolean)); done(); } });
  const log = pino({ level: 'info', timestamp: false, base: { pid: 1, hostname: 'h' }, ...opts }, sink);
  const app = Fastify({ loggerInstance: log, logController: fast === undefined ? AccessLog.for(log) : new AccessLog(fast), genReqId: () => 'req_1' });
  app.get('/a/:id', (_req, reply) => reply.send({ ok: true }));
  app.get('/boom', () => { throw new Error('boom'); });
  await app.ready();
  return { app, lines, log };
}

const REQUESTS = [
  { url: '/a/1' },
  { url: '/a/%E2%82%AC?q="quoted"&x=\\back' },
  { url: '/a/2', headers: { 'accept-version': '1.x', host: 'example.com:8080' } },
  { url: '/missing' },
  { url: '/boom' },
];

describe('access line', () => {
  it('is byte for byte the line pino writes', async () => {
    const fast = await serve({}, true);
    const slow = await serve({}, false);
    for (const r of REQUESTS) {
      await fast.app.inject({ method: 'GET', ...r });
      await slow.app.inject({ method: 'GET', ...r });
    }
    // responseTime differs between two requests: compare everything else, and that it is a number.
    const norm = (l: string) => l.replace(/"responseTime":[0-9.e+-]+/, '"responseTime":0');
    expect(fast.lines.map(norm)).toEqual(slow.lines.map(norm));
    const completed = fast.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed');
    expect(completed.map((l) => l.res.statusCode)).toEqual([200, 200, 200, 404, 500]);
    for (const l of completed) expect(typeof l.responseTime).toBe('number');
    expect(completed[1].req.url).toBe('/a/%E2%82%AC?q=%22quoted%22&x=\\back');
    expect(completed[2].req).toMatchObject({ version: '1.x', host: 'example.com:8080' });
    await fast.app.close();
    await slow.app.close();
  });

  it('follows the logger level', async () => {
    const s = await serve({ level: 'warn' });
    await s.app.inject({ method: 'GET', url: '/a/1' });
    expect(s.lines).toEqual([]);
    s.log.level = 'info';
    await s.app.inject({ method: 'GET', url: '/a/1' });
    expect(s.lines.length).toBe(1);
    await s.app.close();
  });

  it('leaves loggers it cannot honour to pino', async () => {
    expect(plainPino(pino({}))).toBe(true);
    expect(plainPino(pino({ mixin: () => ({ a: 1 }) }))).toBe(false);
    expect(plainPino(pino({ redact: ['req.url'] }))).toBe(false);
    expect(plainPino(pino({ formatters: { log: (o) => o } }))).toBe(false);
    expect(plainPino(pino({ messageKey: 'message' }))).toBe(false);
    expect(plainPino(pino({ msgPrefix: '[x] ' }))).toBe(false);
    expect(plainPino(pino({}, pino.multistream([{ stream: process.stdout }])))).toBe(false);
    expect(plainPino({ info() {} })).toBe(false);
    // A redacting logger still has its URL redacted: the line went through pino.
    const s = await serve({ redact: ['req.url'] });
    await s.app.inject({ method: 'GET', url: '/a/secret' });
    expect(JSON.parse(s.lines[0]).req.url).toBe('[Redacted]');
    await s.app.close();
  });
});
