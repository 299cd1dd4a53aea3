// Small catalogs for the domain tests: a one-model document that each test bends, written to a temp
// dir as YAML and loaded through the real loader.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { CatalogError, type Catalog } from '../../../src/domain/catalog-load.ts';
import { loadCatalog } from '../../../src/backends/catalog.ts';

export const MODEL_A = 'rendergate/start-end-to-video';
export const MODEL_B = 'rendergate/image-to-video';
export const TEXT_MODEL = 'rendergate/shot-list';

export type RawModel = Record<string, unknown> & { fields: Record<string, unknown>[] };

/** A sound model `t/a` with one integer field `n` (1..10, default 5) priced `n * 2`. */
export function rawModel(over: Partial<RawModel> = {}): RawModel {
  return {
    id: 't/a',
    name: 'Test A',
    kind: 'video',
    description: 'A test model.',
    output: { type: 'file', contentType: 'video/mp4' },
    fields: [{ name: 'n', type: 'number', integer: true, minimum: 1, maximum: 10, default: 5 }],
    price: 'n * 2',
    backend: { driver: 'local', renderer: 'test' },
    timeLimitSeconds: 60,
    maxAttempts: 3,
    ...over,
  };
}

/** `rawModel` with one field replaced or added (matched by name). */
export function withField(field: Record<string, unknown>, over: Partial<RawModel> = {}): RawModel {
  const m = rawModel(over);
  const i = m.fields.findIndex((f) => f.name === field.name);
  if (i >= 0) m.fields[i] = field;
  else m.fields.push(field);
  return m;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rendergate-catalog-'));
let n = 0;

/** Writes text to a fresh file in the temp dir and returns its path. */
export function writeTemp(text: string, ext = 'yaml'): string {
  const file = path.join(dir, `catalog-${++n}.${ext}`);
  fs.writeFileSync(file, text);
  return file;
}

export function loadModels(...models: unknown[]): Catalog {
  return loadCatalog(writeTemp(stringify({ models })));
}

/** The problems a catalog of these models is refused with (fails the test if it loads). */
export function problemsOf(...models: unknown[]): string[] {
  return problemsOfText(stringify({ models }));
}

export function problemsOfText(text: string, ext = 'yaml'): string[] {
  try {
    loadCatalog(writeTemp(text, ext));
  } catch (e) {
    if (e instanceof CatalogError) return e.problems;
    throw e;
  }
  throw new Error('the catalog loaded, but a CatalogError was expected');
}
