// The catalog as this build reads it: domain's loader (domain/catalog-load.ts) with the table of
// drivers (drivers.ts). Everything that loads a catalog (the start, `rendergate catalog`, the
// scripts and tests) loads it here, so the checks a backend block gets are its driver's own.
import { catalogLoader } from '../domain/catalog-load.ts';
import { DRIVERS } from './drivers.ts';

const loader = catalogLoader(DRIVERS);

/** A parsed catalog document, checked and compiled; `source` names it in problems. */
export const buildCatalog = loader.build;
/** Catalog text: JSON when `source` ends in .json, else YAML. */
export const parseCatalog = loader.parse;
/** A catalog file, the built-in one (catalog/default.yaml) by default. */
export const loadCatalog = loader.load;
