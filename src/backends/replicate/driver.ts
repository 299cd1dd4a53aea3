// Replicate's hosted API: the catalog block (catalog.ts), the prediction client (index.ts, with the
// frame it shares with fal, shared/hosted.ts), and the fake. No pool: Replicate queues renders
// itself.
import type { Driver } from '../shared/driver.ts';
import { replicateCatalog, type ReplicateBinding } from './catalog.ts';
import { createReplicateBackend } from './index.ts';

export const replicateDriver: Driver<ReplicateBinding> = {
  ...replicateCatalog,
  create: createReplicateBackend,
  fakes: ['test/fakes/replicate.ts'],
};
