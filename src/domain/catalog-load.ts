// Loads the catalog (catalog/default.yaml, or the file RENDERGATE_CATALOG names) once at boot. A
// bad catalog is refused with every problem listed, so the server never starts with a model it
// cannot check or price. Each model's input checkers and price program are compiled here, once: a
// request only runs them. The drivers a backend may name come with the loader (catalogLoader):
// domain/ knows none, and src/backends/catalog.ts is the loader with this build's table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import type { FieldDef, InputValue, ModelDef, ResolvedInputs } from './catalog.ts';
import { checkCatalogDocument } from './catalog-validate.ts';
import { filesUnder } from './catalog-examples.ts';
import { compileInputSpec, type InputSpec } from './inputs.ts';
import { compilePrice, PriceError, type PriceProgram } from './pricing.ts';
import { compileBackendCel, sampleBackendCel, type BackendCel } from './catalog-backend-cel.ts';
import type { CatalogDrivers } from './catalog-driver.ts';
import { MappingError } from './mapping.ts';

/** The built-in catalog; `../../catalog` is the project root from both src/domain and dist/domain. */
export const DEFAULT_CATALOG_PATH = fileURLToPath(
  new URL('../../catalog/default.yaml', import.meta.url),
);

export class CatalogError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`Invalid catalog ${source}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'CatalogError';
  }
}

export interface CompiledModel {
  readonly id: string;
  readonly def: ModelDef;
  /** Compiled per-field checkers (inputs.ts). */
  readonly inputSpec: InputSpec;
  /** Parsed and type-checked price expression (pricing.ts). */
  readonly priceProgram: PriceProgram;
  /** The backend's compiled CEL, by its driver's names (`inputs`, …); empty when it has none. */
  readonly backendCel: BackendCel;
  /** Its backend is itself a chat server: a chat request's conversation goes to it as it is. */
  readonly chatServer: boolean;
}

export class Catalog {
  /** Model definitions in file order. */
  readonly models: readonly ModelDef[];
  readonly compiled: readonly CompiledModel[];
  // A Map, not an object: `get('__proto__')` or `get('constructor')` must simply miss.
  readonly #byId: Map<string, CompiledModel>;

  constructor(compiled: CompiledModel[]) {
    this.compiled = Object.freeze([...compiled]);
    this.models = Object.freeze(compiled.map((m) => m.def));
    this.#byId = new Map(compiled.map((m) => [m.id, m]));
  }

  get(id: string): CompiledModel | undefined {
    return this.#byId.get(id);
  }
}

const SAMPLE_URL = 'https://example.com/image.png';
// A full cross product of sample values up to this many; beyond it, each value varied alone.
const MAX_COMBINATIONS = 4096;
// An integer range this small is sampled whole, so `100 / (duration - 3)` cannot slip through.
const MAX_INTEGER_SPAN = 100;
// Longest text sampled: bodies are capped at 1 MiB anyway, and load must stay fast.
const MAX_TEXT_SAMPLE = 65_536;

/** Values a client could send for a field (`undefined` = left out), chosen to reach the price's extremes. */
function sampleValues(f: FieldDef): (InputValue | undefined)[] {
  const vals: (InputValue | undefined)[] = f.default === null ? [] : [f.default];
  if (f.type === 'enum') vals.push(...(f.values ?? []));
  else if (f.type === 'toggle') vals.push(true, false);
  else if (f.type === 'url') vals.push(SAMPLE_URL);
  else if (f.type === 'text')
    vals.push(
      f.required ? 'x' : '',
      'x'.repeat(Math.min(f.maxLength ?? MAX_TEXT_SAMPLE, MAX_TEXT_SAMPLE)),
    );
  else if (f.minimum === undefined && f.maximum === undefined) vals.push(0, 1);
  else if (f.maximum === undefined)
    vals.push(f.minimum, f.minimum! + 1); // stay on the allowed side
  else if (f.minimum === undefined) vals.push(f.maximum, f.maximum - 1);
  else if (f.integer && f.maximum - f.minimum <= MAX_INTEGER_SPAN) {
    for (let v = f.minimum; v <= f.maximum; v++) vals.push(v);
  } else {
    const mid = (f.minimum + f.maximum) / 2;
    vals.push(f.minimum, f.maximum, f.integer ? Math.floor(mid) : mid);
  }
  if (!f.required && f.default === null) vals.push(undefined);
  return [...new Set(vals)];
}

export function* sampleInputs(fields: readonly FieldDef[]): Generator<ResolvedInputs> {
  const options = fields.map(sampleValues);
  const make = (pick: number[]): ResolvedInputs => {
    const r: ResolvedInputs = {};
    fields.forEach((f, i) => {
      const v = options[i][pick[i]];
      if (v !== undefined) r[f.name] = v;
    });
    return r;
  };
  const pick = fields.map(() => 0);
  yield make(pick);
  if (options.reduce((n, o) => n * o.length, 1) <= MAX_COMBINATIONS) {
    // Odometer over every combination (the first one was yielded above).
    for (let i = 0; i < pick.length;) {
      if (++pick[i] < options[i].length) {
        yield make(pick);
        i = 0;
      } else pick[i++] = 0;
    }
  } else {
    for (let i = 0; i < pick.length; i++) {
      for (let k = 1; k < options[i].length; k++) yield make(pick.map((p, j) => (j === i ? k : p)));
    }
  }
}

const showSample = (r: ResolvedInputs) =>
  JSON.stringify(r, (_k, v: unknown) =>
    typeof v === 'string' && v.length > 40 ? `<${v.length} characters>` : v,
  );

/** Runs the price on the samples; up to three kinds of failure, each with the first inputs that caused it. */
function samplePrice(def: ModelDef, price: PriceProgram): string[] {
  const seen = new Map<string, string>();
  for (const sample of sampleInputs(def.fields)) {
    try {
      price.evaluate(sample);
    } catch (e) {
      if (!(e instanceof PriceError)) throw e;
      const kind = e.message.replace(/-?\d+(\.\d+)?/g, '#'); // "negative, got -1" and "got -2" are one problem
      if (!seen.has(kind))
        seen.set(kind, `model "${def.id}" price: ${e.message} (for inputs ${showSample(sample)})`);
      if (seen.size >= 3) break;
    }
  }
  return [...seen.values()];
}

/** Validates a parsed catalog document and compiles it; throws CatalogError listing every problem. */
function buildCatalog(doc: unknown, drivers: CatalogDrivers, source: string): Catalog {
  // A relative workflow path is relative to the catalog file.
  const dir = path.dirname(path.resolve(source));
  const readJson = (file: string) =>
    JSON.parse(readFileSync(path.resolve(dir, file), 'utf8')) as unknown;
  const { models, problems } = checkCatalogDocument(doc, drivers, readJson, filesUnder(dir));
  const compiled: CompiledModel[] = [];
  for (const def of models) {
    const driver = drivers[def.backend.driver];
    let backendCel: BackendCel;
    try {
      backendCel = compileBackendCel(def, driver);
      problems.push(
        ...sampleBackendCel(def, backendCel, sampleInputs(def.fields), driver.celStrings),
      );
    } catch (e) {
      if (!(e instanceof MappingError)) throw e;
      problems.push(`model "${def.id}": backend ${e.message}`);
      continue;
    }
    try {
      const price = compilePrice(def);
      problems.push(...samplePrice(def, price));
      compiled.push({
        id: def.id,
        def,
        inputSpec: compileInputSpec(def.fields),
        priceProgram: price,
        backendCel,
        chatServer: driver.chatServer === true,
      });
    } catch (e) {
      if (!(e instanceof PriceError)) throw e;
      problems.push(`model "${def.id}" price: ${e.message}`);
    }
  }
  if (problems.length > 0) throw new CatalogError(source, problems);
  return new Catalog(compiled);
}

/** Parses catalog text: JSON when `source` ends in .json, else YAML (duplicate keys refused). */
function parseCatalog(text: string, drivers: CatalogDrivers, source: string): Catalog {
  let doc: unknown;
  if (source.toLowerCase().endsWith('.json')) {
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new CatalogError(source, [`not valid JSON: ${(e as Error).message}`]);
    }
  } else {
    const parsed = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
    if (parsed.errors.length > 0)
      throw new CatalogError(
        source,
        parsed.errors.map((e) => `not valid YAML: ${e.message}`),
      );
    try {
      doc = parsed.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new CatalogError(source, [`not valid YAML: ${(e as Error).message}`]);
    }
  }
  return buildCatalog(doc, drivers, source);
}

/** Reads, validates and compiles a catalog file. */
function loadCatalog(path: string, drivers: CatalogDrivers): Catalog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CatalogError(path, [`cannot be read: ${(e as Error).message}`]);
  }
  return parseCatalog(text, drivers, path);
}

/** Loads catalogs whose backends name `drivers`; each throws CatalogError listing every problem. */
export interface CatalogLoader {
  /** A parsed document (`source` names it in problems; a workflow file is relative to it). */
  build: (doc: unknown, source?: string) => Catalog;
  /** Catalog text: JSON when `source` ends in .json, else YAML. */
  parse: (text: string, source?: string) => Catalog;
  /** A catalog file, the built-in one by default. */
  load: (path?: string) => Catalog;
}

export function catalogLoader(drivers: CatalogDrivers): CatalogLoader {
  return {
    build: (doc, source = 'catalog') => buildCatalog(doc, drivers, source),
    parse: (text, source = 'catalog') => parseCatalog(text, drivers, source),
    load: (path = DEFAULT_CATALOG_PATH) => loadCatalog(path, drivers),
  };
}
