// Faults inside a render: storage that cannot be written, and the renderer's ffmpeg killed. Each ends
// failed and refunded, the service stays up, and the money invariants hold.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { checkInvariants } from '../../helpers/invariants.ts';
import { serviceFixture } from '../../helpers/fixture.ts';
import { waitFor } from '../../helpers/wait.ts';

const f = serviceFixture();

const video = (key: string, inputs: object = {}) =>
  f.api.call('POST', '/v1/generations', {
    key,
    body: {
      modelId: 'rendergate/image-to-video',
      inputs: { prompt: 'a slow push-in', image: f.img.url('/a.png'), ...inputs },
    },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

it('storage that cannot be written fails the render and refunds it; the service stays up', async () => {
  const a = await f.api.account(10_000);
  const tmp = path.join(f.svc.dataDir, 'files', '.tmp');
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.writeFileSync(tmp, 'not a directory'); // as root, permissions cannot stop a write; a file in the way can
  try {
    const r = await video(a.key);
    const g = await f.api.waitFinal(a.key, r.json.id);
    expect(g.status).toBe('failed');
    expect(g.error.code).toBe('STORAGE_FAILED');
    expect(g.refundedCents).toBe(g.costCents);
    const ready = await f.api.call('GET', '/readyz');
    expect([ready.status, ready.json.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
  } finally {
    fs.rmSync(tmp, { force: true });
    fs.mkdirSync(tmp);
  }
  expect((await f.api.call('GET', '/readyz')).status).toBe(200);
  const ok = await video(a.key);
  expect((await f.api.waitFinal(a.key, ok.json.id)).status).toBe('succeeded');
  expect((await f.api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(
    10_000 - ok.json.costCents,
  );
  await checkInvariants(f.dbh.db);
});

it('ffmpeg killed mid-render: failed and refunded', async () => {
  const a = await f.api.account(10_000);
  const r = await video(a.key, { duration: 10 });
  const id = r.json.id as string;
  await waitFor(
    'ffmpeg to run for the render, then killed',
    () => {
      let pids: string[] = [];
      try {
        pids = execFileSync('pgrep', ['-f', `rendergate-${id}`])
          .toString()
          .trim()
          .split('\n')
          .filter(Boolean);
      } catch {
        /* none yet */
      }
      let killed = false;
      for (const pid of pids) {
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (cmd.includes('ffmpeg')) {
          process.kill(Number(pid), 'SIGKILL');
          killed = true;
        }
      }
      return killed;
    },
    { timeoutMs: 30_000 },
  );
  const g = await f.api.waitFinal(a.key, id);
  expect(g.status).toBe('failed');
  expect(g.refundedCents).toBe(g.costCents);
  expect(typeof g.error.message).toBe('string');
  expect((await f.api.call('GET', '/v1/me', { key: a.key })).json.balanceCents).toBe(10_000);
  await checkInvariants(f.dbh.db);
});
