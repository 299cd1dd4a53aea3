// Child of bench/text.ts: runs the text model on one input in a fresh process (so the memory
// figure is this input's alone) and prints { ms, rssBeforeMb, peakRssMb } as one JSON line.
// argv: <kind: prose|worst> <bytes> <repeats>
import { shotListText } from '../../src/backends/local/text-shot-list.ts';
import { benchText } from './prose.ts';

const [kind, bytes, repeats] = [
  process.argv[2],
  Number(process.argv[3]),
  Number(process.argv[4] ?? 3),
];
const text = kind === 'worst' ? 'a!'.repeat(Math.floor(bytes / 2)) : benchText(bytes);
shotListText({ text: 'A gull lands on the quay.', mode: 'shot_list', max_items: 20 }); // load the language model first
const rssBeforeMb = process.memoryUsage().rss / 2 ** 20;
const times: number[] = [];
for (let i = 0; i < repeats; i++) {
  const t0 = performance.now();
  shotListText({ text, mode: 'shot_list', max_items: 20 });
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    ms: times[Math.floor(times.length / 2)],
    rssBeforeMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  }) + '\n',
);
