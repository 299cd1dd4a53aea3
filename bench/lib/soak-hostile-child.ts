// The soak's hostile account in a process of its own (forked by soak-hostile.ts's startHostile): its
// receivers and its floods of renders, uploads and wrong passwords. An attacker's CPU is not the
// server's (in a deployment it is another machine), and its event loop must not hold up the
// well-behaved client's clock readings in the load generator. Protocol over IPC: it sends
// { type: 'ready', port } once its receivers listen; { type: 'run', base, until, parts } runs the floods and answers
// { type: 'done', counts, cpuMs }; { type: 'open' } answers { type: 'open', drip, hang } (connections
// still open at its receivers).
import { hostile, noiseImage, type HostileCounts, type HostilePart } from './soak-hostile.ts';
import { hostileReceiver } from '../../test/helpers/hostile-receiver.ts';

type Order = { type: 'run'; base: string; until: number; parts: HostilePart[] } | { type: 'open' };

const rx = await hostileReceiver();
const noise = await noiseImage();
process.on('message', (m: Order) => {
  if (m.type === 'open') {
    process.send!({ type: 'open', drip: rx.open('drip'), hang: rx.open('hang') });
    return;
  }
  const counts: HostileCounts = { uploads: 0, signins: 0, hostileRenders: 0 };
  const cpu0 = process.cpuUsage();
  hostile(m.base, rx, { until: m.until, parts: m.parts, counts, noise }).then(
    () => {
      const cpu = process.cpuUsage(cpu0);
      process.send!({ type: 'done', counts, cpuMs: Math.round((cpu.user + cpu.system) / 1000) });
    },
    (e: unknown) => process.send!({ type: 'failed', error: String((e as Error)?.stack ?? e) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'ready', port: Number(new URL(rx.base).port) });
