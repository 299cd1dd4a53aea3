// Which server of a model's pool a render goes to (docs/backends.md "Pools and health": `urls`, each
// taking `concurrencyPerUrl` renders at once). Decided at claim, under the model's advisory lock (the
// lock claim.ts takes for model limits), from the renders of the model running on each server across
// the whole cluster: the healthy server with the fewest, if it has room. A render keeps its server in
// `backend_url` while it holds its lease; the count reads only live leases, so a dead worker's server
// frees itself when its lease lapses. While none of a model's servers is healthy (as this worker's
// probes see them) the model's renders are not claimed at all: they wait, spending no attempt, until
// a server returns or the model's deadline (janitor.ts).
import type { ServerPool } from '../backends/shared/pool.ts';

export interface PoolState extends ServerPool {
  healthy: (url: string) => boolean;
}

/** How many renders of the pool may start now, as a cap for the claim's model limits (0 = none healthy). */
export function poolCapacity(pool: PoolState): number {
  return pool.urls.filter((u) => pool.healthy(u)).length * pool.concurrencyPerUrl;
}

/**
 * The healthy server with the fewest running renders below its limit; null when every one is full or down.
 * Ties go to the server this process gave a render least recently (`lastServed`: url → a rising number),
 * so that renders that never overlap still spread over the pool instead of all going to its first server.
 */
export function pickServer(
  pool: PoolState,
  running: { backend_url: string; n: number }[],
  lastServed: ReadonlyMap<string, number> = new Map(),
): string | null {
  const counts = new Map(running.map((r) => [r.backend_url, r.n]));
  let best: string | null = null;
  let bestN = Infinity;
  let bestServed = Infinity;
  for (const url of pool.urls) {
    const n = counts.get(url) ?? 0;
    const served = lastServed.get(url) ?? -1;
    if (
      !pool.healthy(url) ||
      n >= pool.concurrencyPerUrl ||
      n > bestN ||
      (n === bestN && served >= bestServed)
    )
      continue;
    best = url;
    bestN = n;
    bestServed = served;
  }
  return best;
}
