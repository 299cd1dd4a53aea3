// Cog containers (replicate/cog): the catalog block (catalog.ts), the prediction client (index.ts,
// async.ts and the worker's webhook receiver, receiver.ts), a pool of containers, and the fakes.
import type { Driver } from '../shared/driver.ts';
import { poolOf } from '../shared/pool.ts';
import { cogCatalog, type CogBinding } from './catalog.ts';
import { createCogBackend } from './index.ts';

export const cogDriver: Driver<CogBinding> = {
  ...cogCatalog,
  create: createCogBackend,
  pool: poolOf,
  fakes: ['test/fakes/cog.ts', 'test/fakes/cog-async.ts'],
};
