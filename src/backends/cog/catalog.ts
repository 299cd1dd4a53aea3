// A Cog model's block in the catalog: a pool of containers and, optionally, the CEL that makes the
// prediction's `input` from the render's inputs (without it they are sent as they are).
import type { CelMap } from '../../domain/catalog.ts';
import type { CatalogDriver } from '../../domain/catalog-driver.ts';
import { checkCelMap } from '../shared/catalog-checks.ts';
import { checkPool, POOL_KEYS, type ServerPool } from '../shared/pool.ts';

export interface CogBinding extends ServerPool {
  driver: 'cog';
  inputs?: CelMap;
}

export const cogCatalog: CatalogDriver<CogBinding> = {
  keys: [...POOL_KEYS, 'inputs'],
  check(raw, bad) {
    const pool = checkPool(raw, bad);
    const inputs = checkCelMap(raw.inputs, 'inputs', bad);
    return pool && { driver: 'cog', ...pool, ...(inputs ? { inputs } : {}) };
  },
  cel: (b) => ({ inputs: b.inputs }),
};
