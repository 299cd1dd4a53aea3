// What-if measure (node --import tsx bench/whatif/json-cost.ts): the CPU of parsing a request body of
// 1 MiB by its shape (JSON.parse, which Fastify's parser calls, scanning the result only when the text
// names __proto__ or constructor): where the account budget of request bodies
// (src/admission/body-budget.ts) comes from. A long string parses fastest; small numbers and objects,
// which a client chooses as freely, cost ten times as much.

const MiB = 1024 * 1024;
const filled = (item: string, sep = ',') => {
  const n = Math.floor((MiB - 40) / (item.length + sep.length));
  return `{"modelId":"x","inputs":{"n":[${Array(n).fill(item).join(sep)}]}}`;
};
const bodies: Record<string, string> = {
  'one long string': JSON.stringify({ modelId: 'x', inputs: { text: 'a'.repeat(MiB - 40) } }),
  numbers: filled('7'),
  'small objects': filled('{"a":1}'),
};
for (const [shape, body] of Object.entries(bodies)) {
  for (let i = 0; i < 5; i++) JSON.parse(body);
  const n = 50;
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) JSON.parse(body);
  const c = process.cpuUsage(c0);
  console.log(
    `${shape}: ${(body.length / MiB).toFixed(2)} MiB, ${((c.user + c.system) / 1000 / n).toFixed(1)} ms of CPU a parse`,
  );
}
