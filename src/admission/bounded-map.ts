// The one home of admission's per-key state in memory (rate-limit leases, paces, buckets, refusals
// remembered): a map that never holds more than `max` keys, so a flood of new keys (addresses,
// scopes, accounts) costs a bounded amount of memory. Every key admission forgets is only asked
// about again (from its default: a full bucket, the database), never let in wrongly.
//
// A key set becomes the most recent; reading does not reorder (the hot paths read far more than
// they write, and a Map's insertion order is then the order of the last writes). Past `max`, the
// entries `stale` says carry nothing worth keeping go first, then the least recently set. Evicting
// takes the map down to `max - max/16`, so a flood of new keys pays for one sweep per max/16 keys,
// not per key.
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  private readonly low: number;

  constructor(
    readonly max: number,
    /** True of an entry as good as absent at `now` (a full bucket, a refusal that ended). */
    private readonly stale?: (value: V, now: number) => boolean,
  ) {
    this.low = max - Math.floor(max / 16);
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Sets `key`, now the most recent; past `max`, drops stale, then least recent keys. */
  set(key: K, value: V, now?: number): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.evict(key, now ?? Date.now());
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }

  private evict(keep: K, now: number): void {
    if (this.stale)
      for (const [k, v] of this.map) if (k !== keep && this.stale(v, now)) this.map.delete(k);
    for (const k of this.map.keys()) {
      if (this.map.size <= this.low) break;
      if (k !== keep) this.map.delete(k);
    }
  }
}

/**
 * Counts of things held now per key (requests held by `Prefer: wait`, uploads waiting for their
 * turn): bounded by what is held, since a key goes when its count is back to 0. Never evicted: a
 * count forgotten while its things are still held would let more in than the bound.
 */
export class HeldCounts<K> {
  private readonly counts = new Map<K, number>();

  of(key: K): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: K): void {
    this.counts.set(key, this.of(key) + 1);
  }

  /** One fewer held for `key` (never below 0). */
  release(key: K): void {
    const left = this.of(key) - 1;
    if (left > 0) this.counts.set(key, left);
    else this.counts.delete(key);
  }
}
