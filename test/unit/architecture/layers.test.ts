// The layers of src/ (docs/architecture.md): a module imports only from its own layer or the layers
// below it. http and studio → web → services → queue → admission, backends, storage, webhooks →
// domain, db, net, metrics, tracing. The composition root (app.ts, main.ts) and the command line (cli/) sit above everything.
// http and studio are siblings: neither imports the other, and neither (nor web) touches the database
// except through services. SQL lives in db/ alone, and no import circle exists anywhere in src/.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../../src');

const RANK: Record<string, number> = {
  domain: 0,
  db: 0,
  metrics: 0,
  net: 0,
  tracing: 0,
  'config.ts': 0,
  config: 0,
  admission: 1,
  backends: 1,
  storage: 1,
  webhooks: 1,
  queue: 2,
  services: 3,
  web: 4,
  http: 5,
  studio: 5,
  cli: 6,
  'app.ts': 6,
  'main.ts': 6,
};

/** Layers that may not reach the database, even through a type. */
const NO_DB = new Set(['http', 'studio', 'web']);

function layerOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0];
}

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/gm;
const rel = (f: string) => path.relative(SRC, f);

/** Every relative import of src/, type-only ones included: [importing file, imported file]. */
function imports(files: string[]): Array<[string, string]> {
  return files.flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(IMPORT)].map((m): [string, string] => [
      file,
      path.resolve(path.dirname(file), m[1]),
    ]),
  );
}

/** The import circles: groups of files that reach each other (Tarjan's strongly connected components). */
function circles(edges: Array<[string, string]>): string[][] {
  const next = new Map<string, string[]>();
  for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (next.get(v) ?? []).includes(v)) found.push(group.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

// Statements, not words: a keyword followed by what a statement of it takes.
const SQL =
  /\b(?:SELECT\s+(?:[\w*(]|\$)|INSERT\s+INTO\b|UPDATE\s+\w+\s+(?:\w+\s+)?SET\b|DELETE\s+FROM\b)/;

describe('layers', () => {
  const files = sources(SRC);
  const edges = imports(files);

  it('knows the layer of every top-level entry of src/', () => {
    const unknown = [...new Set(files.map(layerOf))].filter((l) => !(l in RANK));
    expect(unknown).toEqual([]);
  });

  it('has no import from a layer above the importing module', () => {
    const upward = edges.filter(([from, to]) => RANK[layerOf(to)] > RANK[layerOf(from)]);
    expect(upward.map(([from, to]) => `${rel(from)} → ${rel(to)}`)).toEqual([]);
  });

  it('has no import between two layers of the same rank (http and studio are siblings)', () => {
    // The lowest rank (domain, db, metrics, net) and the composition root at the top may; no other.
    const checked = (rank: number) => rank > 0 && rank < RANK['app.ts'];
    const across = edges.filter(
      ([from, to]) =>
        layerOf(from) !== layerOf(to) &&
        RANK[layerOf(to)] === RANK[layerOf(from)] &&
        checked(RANK[layerOf(from)]),
    );
    expect(across.map(([from, to]) => `${rel(from)} → ${rel(to)}`)).toEqual([]);
  });

  it('keeps http, studio and web away from db/', () => {
    const reaching = edges.filter(([from, to]) => NO_DB.has(layerOf(from)) && layerOf(to) === 'db');
    expect(reaching.map(([from, to]) => `${rel(from)} → ${rel(to)}`)).toEqual([]);
  });

  it('has SQL statements only under db/', () => {
    const outside = files.filter(
      (f) => layerOf(f) !== 'db' && SQL.test(fs.readFileSync(f, 'utf8')),
    );
    expect(outside.map(rel)).toEqual([]);
  });

  it('finds SQL where it is (the check above can fail)', () => {
    const inDb = files.filter((f) => layerOf(f) === 'db' && SQL.test(fs.readFileSync(f, 'utf8')));
    expect(inDb.map(rel)).toContain('db/accounts.ts');
  });

  it('has no import circle in src/', () => {
    expect(circles(edges).map((group) => group.map(rel))).toEqual([]);
  });

  it('finds a circle where there is one (the check above can fail)', () => {
    expect(
      circles([
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'a'],
        ['c', 'd'],
      ]),
    ).toEqual([['a', 'b', 'c']]);
  });
});
