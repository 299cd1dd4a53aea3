// A pool whose statements a test counts, and can make fail (a database away): how many statements a
// limiter spends, and what it does when they fail.
import type { Db } from '../../src/db/pool.ts';

/** `db` with its queries counted, each failing while `failing()` says so. */
export function counting(target: Db, failing = () => false): { db: Db; queries: () => number } {
  let n = 0;
  const db = new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === 'query') {
        return (...args: unknown[]) => {
          n++;
          if (failing()) return Promise.reject(new Error('connection refused'));
          return (t.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      const v = Reflect.get(t, prop, receiver);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  return { db, queries: () => n };
}
