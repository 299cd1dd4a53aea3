// The access line put together by hand must carry what pino writes through its generic path with
// Fastify's serializers, field for field and in order, for every kind of request (odd URLs, an
// Accept-Version header, a 404, a handler that throws); without a direct writer, lines go through pino.
import http from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  AccessBatch,
  AccessLog,
  accessWriter,
  completedLine,
  durationJson,
  withRequestSerializer,
} from '../../../src/http/access-log.ts';
import { cutTokens } from '../../../src/domain/scrub.ts';

/** A server whose log lines are collected; `direct`: access lines written by the AccessWriter. */
async function serve(opts: pino.LoggerOptions, direct: boolean) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const log = pino({ level: 'info', base: { pid: 1, hostname: 'h' }, ...opts }, sink);
  const app = Fastify({
    // As the server's (src/http/server.ts): the request serializer that cuts one-time tokens.
    loggerInstance: withRequestSerializer(log),
    logController: new AccessLog(
      direct ? accessWriter(log, sink, { pid: 1, hostname: 'h' }) : null,
    ),
    genReqId: () => 'req_1',
  });
  app.get('/a/:id', (_req, reply) => reply.send({ ok: true }));
  app.get('/boom', () => {
    throw new Error('boom');
  });
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
  it('is the line pino writes, but for the time and the response time', async () => {
    const fast = await serve({}, true);
    const slow = await serve({}, false);
    for (const r of REQUESTS) {
      await fast.app.inject({ method: 'GET', ...r });
      await slow.app.inject({ method: 'GET', ...r });
    }
    const norm = (l: string) =>
      l.replace(/"responseTime":[0-9.e+-]+/, '"responseTime":0').replace(/"time":\d+/, '"time":0');
    expect(fast.lines.map(norm)).toEqual(slow.lines.map(norm));
    const completed = fast.lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request completed');
    expect(completed.map((l) => l.res.statusCode)).toEqual([200, 200, 200, 404, 500]);
    for (const l of completed) {
      expect(typeof l.responseTime).toBe('number');
      expect(Math.abs(l.time - Date.now())).toBeLessThan(60_000);
      expect(l).toMatchObject({ level: 30, pid: 1, hostname: 'h', reqId: 'req_1' });
    }
    expect(completed[1].req.url).toBe('/a/%E2%82%AC?q=%22quoted%22&x=\\back');
    expect(completed[2].req).toMatchObject({
      method: 'GET',
      version: '1.x',
      host: 'example.com:8080',
    });
    await fast.app.close();
    await slow.app.close();
  });

  it('cuts one-time tokens from the address, on the direct line and through pino too', async () => {
    const token = 'Zm9vYmFyYmF6cXV4cXV1eHRva2VuMTIzNDU2Nzg5MA';
    const urls = {
      [`/invite/${token}`]: '/invite/Zm9v…',
      [`/RESET/${token}?next=/x`]: '/RESET/Zm9v…?next=/x',
      [`/reset/${token}/more`]: '/reset/Zm9v…/more',
      '/invite/': '/invite/',
      '/invite/short': '/invite/…',
      [`/a/1?token=${token}&limit=2&code=abc`]: '/a/1?token=Zm9v…&limit=2&code=…',
      [`/a/1?x=1&Access_Token=${token}`]: '/a/1?x=1&Access_Token=Zm9v…',
      '/a/1?tokens=keep&mytoken=keep': '/a/1?tokens=keep&mytoken=keep',
      '/reset-links/abc': '/reset-links/abc',
      '/v1/generations/gen_1?limit=20': '/v1/generations/gen_1?limit=20',
    };
    const fast = await serve({ level: 'debug' }, true);
    const slow = await serve({ level: 'debug' }, false);
    for (const url of Object.keys(urls)) {
      await fast.app.inject({ method: 'GET', url });
      await slow.app.inject({ method: 'GET', url });
    }
    for (const { lines } of [fast, slow]) {
      for (const l of lines) expect(l).not.toContain(token.slice(4, 12));
      const of = (msg: string) =>
        lines
          .map((l) => JSON.parse(l))
          .filter((l) => l.msg === msg)
          .map((l) => l.req.url);
      expect(of('request completed')).toEqual(Object.values(urls));
      expect(of('incoming request')).toEqual(Object.values(urls));
    }
    // An address with nothing to cut is the same string.
    const plain = '/v1/generations/gen_01J9?limit=20&cursor=abc';
    expect(cutTokens(plain)).toBe(plain);
    await fast.app.close();
    await slow.app.close();
  });

  it('follows the logger level', async () => {
    const s = await serve({ level: 'warn' }, true);
    await s.app.inject({ method: 'GET', url: '/a/1' });
    expect(s.lines).toEqual([]);
    s.log.level = 'info';
    await s.app.inject({ method: 'GET', url: '/a/1' });
    expect(s.lines.length).toBe(1);
    await s.app.close();
  });

  it('without a writer, goes through pino: a redacting logger still redacts', async () => {
    const s = await serve({ redact: ['req.url'] }, false);
    await s.app.inject({ method: 'GET', url: '/a/secret' });
    expect(JSON.parse(s.lines[0]).req.url).toBe('[Redacted]');
    await s.app.close();
  });

  it('gathers access lines into chunks, the logger’s own lines after those before them', () => {
    const writes: string[] = [];
    const batch = new AccessBatch({ write: (b: Buffer) => writes.push(b.toString()) });
    const log = pino(
      { level: 'info', base: null, timestamp: false, hooks: { streamWrite: batch.before } },
      {
        // The hook hands pino bytes, which it passes on as they are.
        write: (s: string | Buffer) => writes.push(String(s)),
      },
    );
    batch.write('{"a":1}\n');
    batch.write('{"a":2}\n');
    expect(writes).toEqual([]);
    log.warn('own');
    batch.write('{"a":3}\n');
    expect(writes).toEqual(['{"a":1}\n{"a":2}\n{"level":40,"msg":"own"}\n']);
    batch.flush();
    expect(writes[1]).toBe('{"a":3}\n');
    batch.flush();
    expect(writes.length).toBe(2);
    // A full chunk goes at once, in one write.
    const line = `{"pad":"${'x'.repeat(1000)}"}\n`;
    const full = Math.ceil(AccessBatch.CHUNK_CHARS / line.length);
    for (let i = 0; i < full - 1; i++) batch.write(line);
    expect(writes.length).toBe(2);
    batch.write(line);
    expect(writes.length).toBe(3);
    expect(writes[2].length).toBeGreaterThanOrEqual(AccessBatch.CHUNK_CHARS);
    expect(
      writes[2]
        .split('\n')
        .filter(Boolean)
        .every((l) => JSON.parse(l).pad),
    ).toBe(true);
  });

  it('names each request’s own host on a keep-alive connection, and the connection’s address and port', async () => {
    const fast = await serve({}, true);
    const slow = await serve({}, false);
    const send = async (app: typeof fast.app) => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const ports: number[] = [];
      // Another host, status or method on the same connection: each line says its own.
      for (const [host, path, method] of [
        ['a.example', '/a/1', 'GET'],
        ['a.example', '/missing', 'GET'],
        ['a.example', '/a/1', 'GET'],
        ['b.example:8080', '/a/1', 'DELETE'],
        ['a.example', '/a/1', 'GET'],
      ]) {
        await new Promise<void>((resolve, reject) => {
          const req = http.request({
            port,
            host: '127.0.0.1',
            path,
            method,
            agent,
            headers: { host },
          });
          req.end();
          req.on('socket', (s) => s.once('connect', () => ports.push(s.localPort!)));
          req.on('response', (res) => res.resume().on('end', resolve));
          req.on('error', reject);
        });
      }
      agent.destroy();
      await app.close();
      return ports;
    };
    const ports = await send(fast.app);
    expect(ports.length).toBe(1); // one connection for the five requests
    await send(slow.app);
    const completed = (lines: string[]) =>
      lines.filter((l) => (JSON.parse(l) as { msg: string }).msg === 'request completed');
    const reqs = completed(fast.lines).map((l) => JSON.parse(l).req);
    expect(reqs.map((r) => r.host)).toEqual([
      'a.example',
      'a.example',
      'a.example',
      'b.example:8080',
      'a.example',
    ]);
    const statuses = completed(fast.lines).map((l) => JSON.parse(l).res.statusCode);
    expect(statuses).toEqual([200, 404, 200, 404, 200]);
    for (const r of reqs)
      expect(r).toMatchObject({ remoteAddress: '127.0.0.1', remotePort: ports[0] });
    // Field for field what pino writes through its own path, but for the port of the other connection.
    const norm = (l: string) =>
      l
        .replace(/"responseTime":[0-9.e+-]+/, '"responseTime":0')
        .replace(/"time":\d+/, '"time":0')
        .replace(/"remotePort":\d+/, '"remotePort":0');
    expect(completed(fast.lines).map(norm)).toEqual(completed(slow.lines).map(norm));
  });

  it('writes a response time to the microsecond, as a JSON number', () => {
    for (const ms of [
      0, 0.0004, 0.0005, 0.037886999, 0.1, 1, 1.0005, 12.3456, 999.9996, 61234.5678,
    ]) {
      const text = durationJson(ms);
      expect(text).toMatch(/^\d+(\.\d{3})?$/);
      expect(JSON.parse(text)).toBeCloseTo(Math.round(ms * 1000) / 1000, 9);
    }
    expect(durationJson(0.037886999)).toBe('0.038');
    expect(durationJson(2)).toBe('2');
    expect(durationJson(2.05)).toBe('2.050');
  });

  it('escapes what the request sent, and writes each logger’s own bindings', () => {
    const socket = new Socket();
    const odd = {
      id: 'id "with" \\ quotes',
      method: 'GET',
      url: '/a/\u20ac?q="x"&y=\\\u0001\u00e9',
      version: ['1.x', '"2"'],
      socket,
      host: 'h"ost\u00ff',
      ip: '::1',
      status: 201,
      ms: 1.25,
    };
    const lines = [
      completedLine('"pid":1,"hostname":"h"', odd),
      completedLine('', { ...odd, version: undefined, status: 500 }),
      completedLine('"pid":2,"hostname":"other \\"x\\""', { ...odd, version: undefined }),
    ];
    for (const l of lines) expect(l.endsWith('}\n') && !l.slice(0, -1).includes('\n')).toBe(true);
    const [a, b, c] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(a)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'req',
      'res',
      'responseTime',
      'msg',
    ]);
    expect(a).toMatchObject({
      level: 30,
      pid: 1,
      hostname: 'h',
      reqId: odd.id,
      req: {
        method: 'GET',
        url: odd.url,
        version: odd.version,
        host: odd.host,
        remoteAddress: '::1',
      },
      res: { statusCode: 201 },
      responseTime: 1.25,
      msg: 'request completed',
    });
    expect(Object.keys(b)).toEqual(['level', 'time', 'reqId', 'req', 'res', 'responseTime', 'msg']);
    expect(b).toMatchObject({ req: { url: odd.url, host: odd.host }, res: { statusCode: 500 } });
    expect(c).toMatchObject({ pid: 2, hostname: 'other "x"', res: { statusCode: 201 } });
    socket.destroy();
  });
});
