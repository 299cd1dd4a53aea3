// The layers of src/, as docs/architecture.md's table ("Folders and layers") gives them: a module
// imports only from its own folder or the folders its row's "May import" names (layer-table.ts
// reads the table, so the document is what is checked), and never from a higher rank. Folders of
// one rank (above 0) never import each other, http, studio and web never reach db/, SQL lives in
// db/ (and the ledger's folder) alone, and no import circle exists anywhere in src/.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allows, parseLayerTable, type LayerTable } from './layer-table.ts';

const SRC = path.resolve(import.meta.dirname, '../../../src');
const DOC = path.resolve(import.meta.dirname, '../../../docs/architecture.md');

/** Layers that may not reach the database, even through a type. */
const NO_DB = new Set(['http', 'studio', 'web']);
/** Where SQL may be written: db/ and ledger/ (the ledger's statements with its rules). */
const SQL_HOMES = new Set(['db', 'ledger']);

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

/** The imports the table does not allow, as `from → to` lines. */
function disallowed(table: LayerTable, edges: Array<[string, string]>): string[] {
  return edges
    .filter(([from, to]) => !allows(table, layerOf(from), layerOf(to)))
    .map(([from, to]) => `${rel(from)} → ${rel(to)}`);
}

describe('layers', () => {
  const files = sources(SRC);
  const edges = imports(files);
  const table = parseLayerTable(fs.readFileSync(DOC, 'utf8'));
  const rank = (layer: string) => table.rowOf.get(layer)?.rank ?? NaN;
  const top = Math.max(...table.rows.map((r) => r.rank));

  it('knows the layer of every top-level entry of src/ from the documented table', () => {
    const unknown = [...new Set(files.map(layerOf))].filter((l) => !table.rowOf.has(l));
    expect(unknown).toEqual([]);
  });

  it('has no import the table\'s "May import" does not allow', () => {
    expect(disallowed(table, edges)).toEqual([]);
  });

  it('finds an import the table does not allow (the check above can fail)', () => {
    const doc = [
      '## Folders and layers',
      '',
      '| Rank | Folder | Owns | May import |',
      '| ---- | ------ | ---- | ---------- |',
      '| 1 | `queue/` | claims | db |',
      '| 0 | `db/` `config.ts` `config/` | SQL | config |',
    ].join('\n');
    const t = parseLayerTable(doc);
    const at = (f: string) => path.join(SRC, f);
    expect(
      disallowed(t, [
        [at('queue/a.ts'), at('db/b.ts')],
        [at('db/b.ts'), at('config.ts')],
        [at('config.ts'), at('config/stripe.ts')],
        [at('db/b.ts'), at('queue/a.ts')],
      ]),
    ).toEqual(['db/b.ts → queue/a.ts']);
    expect(() => parseLayerTable(doc.replace('| db |', '| db, nowhere |'))).toThrowError(
      /"nowhere" in the May import of queue is no folder of the table/,
    );
  });

  it('has no import from a layer above the importing module', () => {
    const upward = edges.filter(([from, to]) => rank(layerOf(to)) > rank(layerOf(from)));
    expect(upward.map(([from, to]) => `${rel(from)} → ${rel(to)}`)).toEqual([]);
  });

  it('has no import between two layers of the same rank (http and studio are siblings)', () => {
    // The lowest rank (domain, db, metrics, net, …) and the composition root at the top may; no
    // other.
    const checked = (r: number) => r > 0 && r < top;
    const across = edges.filter(
      ([from, to]) =>
        table.rowOf.get(layerOf(from)) !== table.rowOf.get(layerOf(to)) &&
        rank(layerOf(to)) === rank(layerOf(from)) &&
        checked(rank(layerOf(from))),
    );
    expect(across.map(([from, to]) => `${rel(from)} → ${rel(to)}`)).toEqual([]);
  });

  it('keeps http, studio and web away from db/ and ledger/', () => {
    const reaching = edges.filter(
      ([from, to]) => NO_DB.has(layerOf(from)) && SQL_HOMES.has(layerOf(to)),
    );
    expect(reaching.map(([from, to]) => `${rel(from)} → ${rel(to)}`)).toEqual([]);
  });

  it("has SQL statements only under db/ (and the ledger's folder)", () => {
    const outside = files.filter(
      (f) => !SQL_HOMES.has(layerOf(f)) && SQL.test(fs.readFileSync(f, 'utf8')),
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
