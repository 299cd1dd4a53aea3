// One-time links never reach the log whole (docs/operations.md "Logs"): the service as an operator
// runs it (its own process, its real logger writing JSON lines to stdout), at debug level so that
// the lines on arrival are written too; every line of every request to an invitation or a reset link, a
// wrong address under one, and a query carrying a token, shows the token cut.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { ADMIN } from '../helpers/service.ts';
import { spawnService } from '../helpers/spawned.ts';
import { waitFor } from '../helpers/wait.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  dbh = await freshDatabase();
});
afterAll(async () => {
  await dbh?.drop();
});

it('invitation and reset tokens, and ?token= values, are cut in every log line', async () => {
  const svc = await spawnService({
    DATABASE_URL: dbh.url,
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'debug',
  });
  // stdout alone for the lines (the helper's output interleaves stderr, which could split one).
  let stdout = '';
  svc.proc.stdout!.on('data', (d) => {
    stdout += d;
  });
  try {
    const admin = async (p: string, body: unknown) => {
      const r = await fetch(`${svc.base}/admin/v1${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.status, await r.clone().text()).toBeLessThan(300);
      return new URL(((await r.json()) as { link: string }).link).pathname;
    };
    const email = `logs-${Date.now()}@example.test`;
    const invite = await admin('/invites', { email });
    const reset = await admin('/reset-links', { email });
    const tokens = [invite, reset].map((p) => p.split('/')[2]);
    const queryToken = 'q0123456789abcdefghijKLMNOP';
    const visits: [string, string, number][] = [
      // The reset link issued after it voided the invitation: a 410 page, its token as secret.
      ['GET', invite, 410],
      ['GET', reset, 200],
      ['POST', reset, 0],
      ['GET', `${invite}/more`, 404],
      ['GET', `/v1/me?token=${queryToken}&limit=1`, 401],
    ];
    for (const [method, p, status] of visits) {
      const r = await fetch(svc.base + p, {
        method,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: method === 'POST' ? 'password=short' : undefined,
        redirect: 'manual',
      });
      await r.arrayBuffer();
      if (status) expect(r.status, `${method} ${p}`).toBe(status);
      else expect(r.status, `${method} ${p}`).toBeLessThan(500);
    }
    const expected = [
      `/invite/${tokens[0].slice(0, 4)}…`,
      `/reset/${tokens[1].slice(0, 4)}…`,
      `/reset/${tokens[1].slice(0, 4)}…`,
      `/invite/${tokens[0].slice(0, 4)}…/more`,
      '/v1/me?token=q012…&limit=1',
    ];
    const ours = (u: string) => /^\/(invite|reset)\/|token=/.test(u);
    const urls = (msg: string) =>
      stdout
        .split('\n')
        .filter((l) => l.startsWith('{') && l.endsWith('}'))
        .map((l) => JSON.parse(l) as { msg: string; req?: { url: string } })
        .filter((l) => l.msg === msg)
        .map((l) => l.req!.url)
        .filter(ours);
    // Lines are written asynchronously (within 200 ms): the last request's line proves the others'.
    await waitFor('the access lines', () => urls('request completed').length >= expected.length);
    // The direct access line of every request; pino's own line on arrival (the request serializer)
    // of those whose route does not quiet its lines below warn (the links' own routes do).
    expect(urls('request completed')).toEqual(expected);
    expect(urls('incoming request')).toEqual(expected.slice(3));
    const out = svc.output();
    for (const t of [...tokens, queryToken]) {
      // Not the token, nor any 8 characters of it in a row.
      for (let i = 0; i + 8 <= t.length; i++) expect(out).not.toContain(t.slice(i, i + 8));
    }
  } finally {
    // A SIGTERM ends it either way: gracefully, or (before its handler is in place) at once.
    svc.proc.kill('SIGTERM');
    await svc.exited;
  }
}, 120_000);
