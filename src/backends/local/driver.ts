// The built-in renderers (ffmpeg and NLP, in this process): the catalog block names one
// (catalog.ts); the renderers themselves are built once for all models (index.ts). They need no
// secret and no server, so even a process that renders nothing builds them, and a catalog naming a
// renderer this build lacks stops every process's start. Tested against real ffmpeg: no fake.
import { DriverSetupError, type Driver } from '../shared/driver.ts';
import { localCatalog, type LocalBinding } from './catalog.ts';

export const localDriver: Driver<LocalBinding> = {
  ...localCatalog,
  create(model, b, deps) {
    if (Object.hasOwn(deps.renderers, b.renderer)) return deps.renderers[b.renderer];
    throw new DriverSetupError(
      `model ${model.id}: backend.renderer "${b.renderer}" is not a built-in renderer (${Object.keys(deps.renderers).join(', ')})`,
    );
  },
  everyRole: true,
  fakes: [],
};
