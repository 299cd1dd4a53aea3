// The `backend` block of a model: a driver of the table the catalog is loaded with, no key that
// driver does not take, then the driver's own check (src/backends/<driver>/catalog.ts), one problem
// per bad key, so `rendergate catalog check` lists them all. The CEL in the block is compiled by
// catalog-load.ts; secrets (`${env:NAME}`) are only checked for form here and read from the
// environment at start (src/backends/secrets.ts).
import type { BackendBinding } from './catalog.ts';
import type { CatalogDrivers, ReadJson } from './catalog-driver.ts';
import { isObject, type Report } from './catalog-check.ts';

/** Checks one backend; `readJson` loads a file named relative to the catalog. */
export function checkBackend(
  raw: unknown,
  bad: Report,
  readJson: ReadJson,
  drivers: CatalogDrivers,
): BackendBinding | undefined {
  // Own keys only: a driver named "constructor" or "__proto__" is simply unknown.
  if (!isObject(raw) || typeof raw.driver !== 'string' || !Object.hasOwn(drivers, raw.driver)) {
    bad(`backend.driver must be one of ${Object.keys(drivers).join(', ')}`);
    return undefined;
  }
  const name = raw.driver;
  const driver = drivers[name];
  for (const k of Object.keys(raw))
    if (k !== 'driver' && !driver.keys.includes(k))
      bad(`unknown backend key "${k}" for driver ${name}`);
  let n = 0;
  const count: Report = (m) => {
    n++;
    bad(m);
  };
  const result = driver.check(raw, count, readJson);
  return n === 0 ? result : undefined;
}
