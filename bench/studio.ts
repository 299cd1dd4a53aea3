// Studio pages: a signed-in person's model page (the form generated from the catalog, its default price)
// and History (an account with 50 generations; the page shows the newest 20), each answered with the
// session lookup and rendering, against the bare node:http server answering the same HTML, with the
// framework floor (Fastify, one route) beside them.
import type { BenchContext } from './lib/context.ts';
import { compareHttp, comparedRow, floorRow } from './lib/compare.ts';
import type { Result } from './lib/report.ts';
import {
  ADMIN_TOKEN,
  call,
  IMAGE_TO_VIDEO,
  nextIdempotencyKey,
  startRendergate,
} from './lib/service.ts';

/** Signs up through the studio's own form and returns the session cookie. */
export async function signUp(base: string): Promise<string> {
  const form = await fetch(`${base}/signup`);
  const csrfCookie = form.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
  const res = await fetch(`${base}/signup`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: base,
      cookie: csrfCookie,
    },
    body: new URLSearchParams({
      _csrf: token,
      email: `bench-${Date.now()}@bench.test`,
      password: 'bench password 123',
    }),
  });
  if (res.status !== 303) throw new Error(`sign-up -> ${res.status}`);
  // The session and the CSRF secret, as a browser holds them (without the latter every page makes a new one).
  return [
    csrfCookie,
    ...res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .filter((c) => c.startsWith('rg_session=')),
  ].join('; ');
}

const P99_TARGET_MS = 20;

export async function run(ctx: BenchContext): Promise<Result[]> {
  const svc = await startRendergate(ctx, await ctx.pg.createDatabase('bench_studio'), {
    role: 'api',
  });
  try {
    const cookie = await signUp(svc.base);
    const accountId = await accountOfCookie(svc.base, cookie);
    await call(svc.base, 'POST', `/admin/v1/accounts/${accountId}/credits`, {
      key: ADMIN_TOKEN,
      body: { amountCents: 1_000_000_000 },
    });
    const key = (
      await call(svc.base, 'POST', `/admin/v1/accounts/${accountId}/keys`, {
        key: ADMIN_TOKEN,
        body: { rateLimitPerMinute: 1_000_000_000 },
      })
    ).json.key;
    for (let i = 0; i < 50; i++) {
      const r = await call(svc.base, 'POST', '/v1/generations', {
        key,
        body: IMAGE_TO_VIDEO,
        headers: { 'idempotency-key': nextIdempotencyKey() },
      });
      if (r.status !== 202) throw new Error(`create -> ${r.status} ${r.text}`);
    }
    const rows: Result[] = [];
    // Target: p99 ≤ 20 ms at 16 connections (the page a person waits for), beside the framework floor.
    for (const [name, path] of [
      ['model page', '/models/rendergate/image-to-video'],
      ['history (50 generations)', '/history'],
    ] as const) {
      const sample = await fetch(svc.base + path, { headers: { cookie } });
      const body = await sample.text();
      if (sample.status !== 200) throw new Error(`${path} -> ${sample.status}`);
      const runs = await compareHttp(ctx, {
        name: `studio ${name}`,
        concurrencies: ctx.quick ? [16] : [16, 64],
        request: { method: 'GET', headers: { cookie } },
        rg: svc,
        path,
        body,
        floorAt: 16,
      });
      rows.push(
        ...runs.flatMap((x) =>
          [
            comparedRow(
              'studio',
              `GET ${path} (${Math.round(Buffer.byteLength(body) / 1024)} KiB HTML)`,
              'bare http',
              x,
              x.c === 16 ? 'p99 ≤ 20 ms' : '-',
              (_ratio, r) => r.c !== 16 || (r.rg.p99 !== null && r.rg.p99 <= P99_TARGET_MS),
            ),
            floorRow('studio', x),
          ].filter((r) => r !== null),
        ),
      );
    }
    return rows;
  } finally {
    await svc.stop();
  }
}

/** The account behind a session (the admin API has no lookup by email): a key made in the studio names it on /v1/me. */
export async function accountOfCookie(base: string, cookie: string): Promise<string> {
  const page = await fetch(`${base}/keys`, { headers: { cookie } });
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1];
  const made = await fetch(`${base}/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, cookie },
    body: new URLSearchParams({ _csrf: token, name: 'bench' }),
  });
  const key = /id="new-key" readonly value="([^"]+)"/.exec(await made.text())![1];
  return (await call(base, 'GET', '/v1/me', { key })).json.accountId;
}
