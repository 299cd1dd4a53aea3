// The bounded maps of per-key state kept in memory (upload turns, body budgets, attempt buckets): a key
// set is made the most recent, and past `max` keys the least recently set go first.

/** Sets `key` to `value` as the map's most recent entry; drops the least recent past `max` (never `key`). */
export function setRecent<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  for (const k of map.keys()) {
    if (map.size <= max) break;
    if (k !== key) map.delete(k);
  }
}
