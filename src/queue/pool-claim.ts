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
 * The pool's healthy servers in the order a tie between them goes: the one this process gave a
 * render least recently first (`lastServed`: url → a rising number; never given one: first, in the
 * pool's order). So renders that never overlap still spread over the pool instead of all going to
 * its first server. The claim (db/sql/claim_limited.sql) takes the first of them with the fewest
 * running renders below the per-server limit.
 */
export function serverPreference(
  pool: PoolState,
  lastServed: ReadonlyMap<string, number> = new Map(),
): string[] {
  const served = (url: string) => lastServed.get(url) ?? -1;
  // Array.prototype.sort is stable: equal ones keep the pool's order.
  return pool.urls.filter((u) => pool.healthy(u)).sort((a, b) => served(a) - served(b));
}
