// fal's queue: the catalog block (catalog.ts), the request client (index.ts, with the frame it
// shares with Replicate, shared/hosted.ts), and the fake. No pool: fal queues renders itself.
import type { Driver } from '../shared/driver.ts';
import { falCatalog, type FalBinding } from './catalog.ts';
import { createFalBackend } from './index.ts';

export const falDriver: Driver<FalBinding> = {
  ...falCatalog,
  create: createFalBackend,
  fakes: ['test/fakes/fal.ts'],
};
