// A client that sends its request one byte a second is dropped once the request timeout passes, with
// the contract's body; the service keeps serving everyone else meanwhile.
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;

beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url, {
    role: 'api',
    env: { RENDERGATE_REQUEST_TIMEOUT_SECONDS: '2' },
  });
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

/** Sends `head` at once, then `drip` one byte a second; resolves when the server closes the connection. */
function slowClient(
  head: string,
  drip: string,
): Promise<{ answer: string; ms: number; dripped: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let answer = '';
    let dripped = 0;
    const sock = net.connect(Number(new URL(svc.base).port), '127.0.0.1', () => sock.write(head));
    const timer = setInterval(() => {
      if (dripped < drip.length && !sock.destroyed) sock.write(drip[dripped++]);
    }, 1_000);
    const giveUp = setTimeout(() => sock.destroy(), 20_000);
    sock.on('data', (d) => {
      answer += String(d);
    });
    sock.on('error', () => {});
    sock.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ answer, ms: Date.now() - t0, dripped });
    });
  });
}

it('drops a client that dribbles its headers or its body, and keeps serving others', async () => {
  const { key } = await client(svc.base).account(0);
  const headers = slowClient(
    '',
    'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ' + 'a'.repeat(60) + '\r\n\r\n',
  );
  const body = slowClient(
    `POST /v1/quote HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{`,
    'a'.repeat(60),
  );
  expect((await client(svc.base).call('GET', '/healthz')).status).toBe(200);
  for (const r of [await headers, await body]) {
    // Cut long before the 60 bytes (one a second) were sent, or the test's own 20 s give-up.
    expect(r.ms).toBeLessThan(15_000);
    expect(r.dripped).toBeLessThan(15);
  }
  // headers too slow: Node answers 408, with the contract's body; a body too slow: the connection is cut
  expect((await headers).answer).toMatch(/^HTTP\/1\.1 408 [^]*"code":"REQUEST_TIMEOUT"/);
  expect((await body).answer).toBe('');
  // answered early (no key) while the body is still coming: the rest of a small body is awaited until
  // the request's deadline (to keep the connection), then the connection is cut, not left to drip
  const early = await slowClient(
    'POST /v1/quote HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{',
    'a'.repeat(60),
  );
  expect(early.answer).toMatch(/^HTTP\/1\.1 401 /);
  expect(early.ms).toBeLessThan(15_000); // closed, not left to drip until the 20 s give-up
}, 40_000);
