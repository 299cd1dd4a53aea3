// ComfyUI servers: the catalog block with its workflow (catalog.ts), the prompt client following
// the websocket (index.ts, events.ts, workflow.ts), a pool of servers, and the fake.
import type { Driver } from '../shared/driver.ts';
import { poolOf } from '../shared/pool.ts';
import { comfyCatalog, type ComfyBinding } from './catalog.ts';
import { createComfyBackend } from './index.ts';

export const comfyDriver: Driver<ComfyBinding> = {
  ...comfyCatalog,
  create: createComfyBackend,
  pool: poolOf,
  fakes: ['test/fakes/comfyui.ts'],
};
