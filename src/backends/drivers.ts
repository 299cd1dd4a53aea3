// The one table of drivers: what a catalog's `backend.driver` may name, in the order a problem
// lists them. Each is a folder of its own (src/backends/<name>/: catalog.ts, the runtime,
// driver.ts), so a new protocol is a new folder and a line here (docs/architecture.md "Drivers").
import type { Driver } from './shared/driver.ts';
import { localDriver } from './local/driver.ts';
import { cogDriver } from './cog/driver.ts';
import { comfyDriver } from './comfyui/driver.ts';
import { openAiDriver } from './openai/driver.ts';
import { replicateDriver } from './replicate/driver.ts';
import { falDriver } from './fal/driver.ts';

export const DRIVERS: Readonly<Record<string, Driver>> = {
  local: localDriver,
  cog: cogDriver,
  comfyui: comfyDriver,
  openai: openAiDriver,
  replicate: replicateDriver,
  fal: falDriver,
};
