// The soak's hostile account (bench/soak.ts): renders feeding webhook endpoints that drip their answer
// forever or never answer (test/helpers/hostile-receiver.ts), a flood of uploads of noise images, and a
// flood of wrong passwords at the studio's sign-in. `parts` picks which of the three run, so a run can
// tell which one costs the well-behaved account what (RENDERGATE_BENCH_SOAK_HOSTILE).
import crypto from 'node:crypto';
import sharp from 'sharp';
import { call, makeAccount, type Service } from './service.ts';
import type { hostileReceiver } from '../../test/helpers/hostile-receiver.ts';

export type HostilePart = 'webhooks' | 'uploads' | 'signins';
export const HOSTILE_PARTS: HostilePart[] = ['webhooks', 'uploads', 'signins'];

export interface HostileCounts {
  uploads: number;
  signins: number;
  hostileRenders: number;
}

export const SHOT_LIST = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A gull lands on the pier. The tide turns. Night falls.' },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function endpoint(base: string, key: string, url: string): Promise<string> {
  const r = await call(base, 'POST', '/v1/webhook-endpoints', { key, body: { url } });
  if (r.status !== 201) throw new Error(`endpoint -> ${r.status} ${r.text}`);
  return r.json.id;
}

export async function hostile(
  svc: Service,
  rx: Awaited<ReturnType<typeof hostileReceiver>>,
  o: { until: number; parts: HostilePart[]; counts: HostileCounts },
) {
  const { until, counts } = o;
  const h = await makeAccount(svc.base);
  const email = (await call(svc.base, 'GET', '/v1/me', { key: h.key })).json?.email;
  const ids: string[] = [];
  if (o.parts.includes('webhooks')) {
    for (let i = 0; i < 5; i++) ids.push(await endpoint(svc.base, h.key, rx.url(`/drip/${i}`)));
    for (let i = 0; i < 4; i++) ids.push(await endpoint(svc.base, h.key, rx.url(`/hang/${i}`)));
  }
  const noise = await sharp(crypto.randomBytes(200 * 200 * 3), {
    raw: { width: 200, height: 200, channels: 3 },
  })
    .png()
    .toBuffer();
  const renders = async () => {
    while (Date.now() < until) {
      const r = await call(svc.base, 'POST', '/v1/generations', {
        key: h.key,
        body: SHOT_LIST,
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
      if (r.status === 202) counts.hostileRenders++;
      await sleep(r.status === 202 ? 200 : 1000);
    }
  };
  const uploads = async () => {
    while (Date.now() < until) {
      const r = await fetch(`${svc.base}/v1/uploads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.key}`, 'content-type': 'image/png' },
        body: new Uint8Array(noise),
      });
      await r.arrayBuffer();
      counts.uploads++;
    }
  };
  const signins = async () => {
    while (Date.now() < until) {
      const form = await fetch(`${svc.base}/signin`);
      const cookie = form.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
      const r = await fetch(`${svc.base}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.base, cookie },
        body: new URLSearchParams({
          _csrf: token,
          email: email ?? 'nobody@bench.test',
          password: `wrong ${counts.signins}`,
        }),
      });
      await r.arrayBuffer();
      counts.signins++;
    }
  };
  const loops: Promise<void>[] = [];
  if (o.parts.includes('webhooks')) loops.push(renders(), renders());
  if (o.parts.includes('uploads')) loops.push(uploads(), uploads());
  if (o.parts.includes('signins')) loops.push(signins(), signins());
  await Promise.all(loops);
  // the attacker leaves: its endpoints go, so no new attempt starts; those under way end within 15 s
  for (const id of ids)
    await call(svc.base, 'DELETE', `/v1/webhook-endpoints/${id}`, { key: h.key });
}
