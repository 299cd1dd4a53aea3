// The live display of a render on a terminal (cli-progress): status, queue position, progress bar and
// elapsed time, redrawn on stderr so stdout keeps only the result.
import cliProgress from 'cli-progress';
import type { Generation } from '../types.js';

function where(g: Generation): string {
  if (g.status !== 'queued') return g.status;
  if (g.queuePosition) return `waiting, #${g.queuePosition} in queue`;
  return g.startedAt ? 'running' : 'waiting';
}

export function progressDisplay(stream: NodeJS.WriteStream) {
  const bar = new cliProgress.SingleBar(
    {
      format: '{id} {bar} {percentage}% | {where} | {duration_formatted}',
      stream,
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      barsize: 30,
      fps: 4,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(g: Generation) {
      const value = Math.round((g.status === 'succeeded' ? 1 : (g.progress ?? 0)) * 100);
      if (!started) {
        bar.start(100, value, { id: g.id, where: where(g) });
        started = true;
      } else bar.update(value, { where: where(g) });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
