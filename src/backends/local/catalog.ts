// A built-in renderer's block in the catalog: the renderer's name. Whether this build has it is
// known only when the backends are built (driver.ts), where tests may add renderers of their own.
import type { CatalogDriver } from '../../domain/catalog-driver.ts';

export interface LocalBinding {
  driver: 'local';
  renderer: string;
}

const RENDERER = /^[a-z0-9][a-z0-9_-]*$/;

export const localCatalog: CatalogDriver<LocalBinding> = {
  keys: ['renderer'],
  check(raw, bad) {
    if (typeof raw.renderer === 'string' && RENDERER.test(raw.renderer))
      return { driver: 'local', renderer: raw.renderer };
    return void bad(
      'backend.renderer must be a renderer name (lowercase letters, digits, - and _)',
    );
  },
};
