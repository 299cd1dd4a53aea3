// A request's logger is made on its first line: it writes what pino's child would (the request id bound,
// the route's own level obeyed), and a request that writes nothing makes no child at all.
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { expect, it } from 'vitest';
import { requestLogger } from '../../../src/http/request-log.ts';

async function serve() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const log = pino({ level: 'info', base: { pid: 1 } }, sink);
  let children = 0;
  // Fastify hands the factory a logger of its own over `log`: count the children made of that one.
  const spied = new WeakSet<object>();
  const factory: typeof requestLogger = (logger, bindings, opts) => {
    if (!spied.has(logger)) {
      spied.add(logger);
      const child = logger.child.bind(logger);
      logger.child = (b, o) => {
        children++;
        return child(b, o);
      };
    }
    return requestLogger(logger, bindings, opts);
  };
  const app = Fastify({
    loggerInstance: log,
    disableRequestLogging: true,
    childLoggerFactory: factory,
    genReqId: () => 'req_1',
  });
  app.get('/quiet', (req, reply) => {
    req.log.debug('not at info');
    reply.send({ ok: true });
  });
  app.get('/warn', (req, reply) => {
    req.log.warn({ a: 1 }, 'careful');
    req.log.info('then info');
    reply.send({ ok: true });
  });
  app.get('/route-level', { logLevel: 'warn' }, (req, reply) => {
    req.log.info('hidden by the route');
    req.log.warn('shown');
    reply.send({ ok: true });
  });
  await app.ready();
  return { app, lines, log, children: () => children };
}

it('makes no child for a request that writes nothing', async () => {
  const s = await serve();
  await s.app.inject({ url: '/quiet' });
  expect(s.children()).toBe(0);
  expect(s.lines).toEqual([]);
  // The process's level decides, as it changes.
  s.log.level = 'debug';
  await s.app.inject({ url: '/quiet' });
  expect(s.lines).toMatchObject([{ level: 20, reqId: 'req_1', pid: 1, msg: 'not at info' }]);
  await s.app.close();
});

it('writes the lines pino’s child writes, with the request id', async () => {
  const s = await serve();
  await s.app.inject({ url: '/warn' });
  expect(s.children()).toBe(1);
  expect(s.lines).toMatchObject([
    { level: 40, reqId: 'req_1', pid: 1, a: 1, msg: 'careful' },
    { level: 30, reqId: 'req_1', msg: 'then info' },
  ]);
  await s.app.close();
});

it('keeps a route’s own log level', async () => {
  const s = await serve();
  await s.app.inject({ url: '/route-level' });
  expect(s.lines.map((l) => l.msg)).toEqual(['shown']);
  await s.app.close();
});
