// Compiles the CEL of a model's backend once, at catalog load (like its price), and tries it on
// sample inputs so that an expression that fails for some inputs (a wrong type, a missing optional
// field read without has()) is refused at start instead of failing renders. Which expressions a
// block holds is its driver's to say (CatalogDriver.cel).
import type { ModelDef, ResolvedInputs } from './catalog.ts';
import type { CatalogDriver } from './catalog-driver.ts';
import { compileMapping, MappingError, type Mapping } from './mapping.ts';

/** The backend's compiled CEL by the driver's names (`inputs`, …); empty when it has none. */
export type BackendCel = Readonly<Record<string, Mapping | undefined>>;

export function compileBackendCel(def: ModelDef, driver: CatalogDriver): BackendCel {
  const out: Record<string, Mapping | undefined> = {};
  const problems: string[] = [];
  for (const [what, exprs] of Object.entries(driver.cel?.(def.backend) ?? {})) {
    if (!exprs) continue;
    try {
      out[what] = compileMapping(def.fields, exprs, what);
    } catch (e) {
      if (!(e instanceof MappingError)) throw e;
      problems.push(e.message);
    }
  }
  if (problems.length > 0) throw new MappingError(problems.join('; '));
  return out;
}

const SAMPLES = 500;

/**
 * Runs each mapping on sample inputs; the first failure of each, with the inputs that caused it. The
 * mappings named in `strings` must yield a string for every name.
 */
export function sampleBackendCel(
  def: ModelDef,
  cel: BackendCel,
  samples: Iterable<ResolvedInputs>,
  strings: readonly string[] = [],
): string[] {
  const problems = new Map<string, string>();
  let n = 0;
  for (const sample of samples) {
    if (n++ >= SAMPLES) break;
    for (const [what, mapping] of Object.entries(cel)) {
      if (!mapping || problems.has(what)) continue;
      try {
        const out = mapping.evaluate(sample);
        if (strings.includes(what)) {
          for (const [i, v] of Object.entries(out))
            if (typeof v !== 'string') throw new MappingError(`${what}.${i} must yield a string`);
        }
      } catch (e) {
        if (!(e instanceof MappingError)) throw e;
        problems.set(
          what,
          `model "${def.id}": backend ${e.message} (for inputs ${JSON.stringify(sample).slice(0, 200)})`,
        );
      }
    }
  }
  return [...problems.values()];
}
