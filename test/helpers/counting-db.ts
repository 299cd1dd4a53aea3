// A pool whose statements a test counts, and can make fail (a database away): how many statements a
// limiter spends, which named statements a claim sends, and what they do when they fail.
import type { Db } from '../../src/db/pool.ts';

/**
 * `db` with its queries counted, each failing while `failing()` says so. `names`: each query's
 * statement name in order ('?' for an unnamed one); a test may empty it between steps.
 */
export function counting(
  target: Db,
  failing = () => false,
): { db: Db; queries: () => number; names: string[] } {
  let n = 0;
  const names: string[] = [];
  const db = new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === 'query') {
        return (...args: unknown[]) => {
          n++;
          names.push((args[0] as { name?: string } | undefined)?.name ?? '?');
          if (failing()) return Promise.reject(new Error('connection refused'));
          return (t.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      const v = Reflect.get(t, prop, receiver);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  return { db, queries: () => n, names };
}
