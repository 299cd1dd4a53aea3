// What-if measure (node --import tsx bench/whatif/upload-cost.ts [n]): the server's CPU per upload of
// the soak's noise image, by thread kind (event loop, libvips, the rest), and PostgreSQL's, over n
// uploads from two loops at the soak's pace. Changes no behaviour; for comparing an upload's cost
// before and after a change.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchPostgres } from '../lib/pg.ts';
import { cpuWindow } from '../lib/cpu.ts';
import { makeAccount, startRendergate } from '../lib/service.ts';
import { noiseImage, upload } from '../lib/soak-hostile.ts';
import type { BenchContext } from '../lib/context.ts';

function threads(pid: number): Map<string, number> {
  const m = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      const kind =
        tid === String(pid)
          ? 'event loop'
          : comm
              .replace(/[-\d ]+$/, '')
              .replace(/worker$/, '')
              .trim();
      m.set(kind, (m.get(kind) ?? 0) + (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      /* ended */
    }
  }
  return m;
}

const n = Number(process.argv[2] ?? 400);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-upload-cost-'));
fs.chmodSync(tmp, 0o755);
const pg = await BenchPostgres.start(path.join(tmp, 'pg'));
const ctx = { tmp, pg, log: () => {} } as unknown as BenchContext;
const url = await pg.createDatabase('upload_cost');
const svc = await startRendergate(ctx, url, { role: 'serve' });
try {
  const a = await makeAccount(svc.base, undefined, 6_000);
  const image = await noiseImage();
  for (let i = 0; i < 10; i++) await (await upload(svc.base, a.key, image)).arrayBuffer();
  const profile = process.env.UPLOAD_COST_PROFILE;
  if (profile) await svc.child.call({ type: 'profile-start' });
  const t0 = threads(svc.child.pid);
  const cpu = cpuWindow(svc.child.pid, pg.dataDir);
  let sent = 0;
  const loop = async () => {
    while (sent < n) {
      sent++;
      const r = await upload(svc.base, a.key, image);
      await r.arrayBuffer();
      if (r.status !== 201) throw new Error(`upload -> ${r.status}`);
    }
  };
  await Promise.all([loop(), loop()]);
  const used = cpu();
  if (profile) await svc.child.call({ type: 'profile-stop', file: profile });
  const t1 = threads(svc.child.pid);
  const per = (ms: number) => (ms / n).toFixed(2);
  const kinds = [...t1].map(([k, v]) => `${k} ${per(v - (t0.get(k) ?? 0))}`).join(', ');
  console.log(
    `${n} uploads of ${image.length} B in ${used.wallMs} ms; per upload, ms of CPU: server ${per(used.serverMs!)} ` +
      `(kernel ${per(used.serverSysMs!)}; ${kinds}), postgres ${per(used.postgresMs!)}`,
  );
} finally {
  await svc.stop();
  await pg.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
