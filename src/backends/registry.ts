// Binds each catalog model to the backend that renders it, checked once at boot so that a catalog
// naming an unknown renderer stops the start instead of failing renders later.
import type { Config } from '../config.ts';
import type { Catalog } from '../domain/catalog-load.ts';
import type { ModelDef } from '../domain/catalog.ts';
import { createLocalBackends } from './local/index.ts';
import type { ModelBackend } from './types.ts';

export function createBackendRegistry(config: Config, catalog: Catalog, extra: Record<string, ModelBackend> = {}) {
  const local: Record<string, ModelBackend> = { ...createLocalBackends({ allowPrivateUrls: config.allowPrivateUrls, fetchTimeoutMs: config.fetchTimeoutMs }), ...extra };
  const problems = catalog.models
    .filter((m) => !Object.hasOwn(local, m.backend.renderer))
    .map((m) => `model ${m.id}: backend.renderer "${m.backend.renderer}" is not a built-in renderer (${Object.keys(local).join(', ')})`);
  if (problems.length > 0) throw new Error(`catalog: ${problems.join('; ')}`);
  return (model: ModelDef): ModelBackend => local[model.backend.renderer];
}
