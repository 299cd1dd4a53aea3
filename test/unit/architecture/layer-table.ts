// Reads the table of layers in docs/architecture.md ("Folders and layers": Rank | Folder | Owns |
// May import), so that the layering test checks what the document says and the two cannot drift
// apart. Columns are found by their header, so one may be added or moved; rows may be added in any
// order.

export interface LayerRow {
  rank: number;
  /** Top-level entries of src/ as a layer names them: `http` for `http/`, `app.ts` for `app.ts`. */
  entries: string[];
  /** The entries it may import (besides its own row's), or 'anything'. */
  mayImport: Set<string> | 'anything';
}

export interface LayerTable {
  rows: LayerRow[];
  /** The row of each top-level entry. */
  rowOf: Map<string, LayerRow>;
}

const SECTION = '## Folders and layers';

const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());

/** `http/` → `http`, `app.ts` → `app.ts`; what layerOf() gives for a file under it. */
const entryOf = (name: string) => name.replace(/\/$/, '');
/** A name of the May import column: `config` names `config.ts` and `config/`. */
const bare = (entry: string) => entry.replace(/\.ts$/, '');

/** The table of the section; throws naming what is wrong with it. */
export function parseLayerTable(markdown: string): LayerTable {
  const start = markdown.indexOf(SECTION);
  if (start < 0) throw new Error(`no "${SECTION}" section`);
  const lines = markdown.slice(start).split('\n');
  const first = lines.findIndex((l) => l.trim().startsWith('|'));
  if (first < 0) throw new Error(`no table under "${SECTION}"`);
  const table: string[] = [];
  for (const l of lines.slice(first)) {
    if (!l.trim().startsWith('|')) break;
    table.push(l);
  }
  const header = cellsOf(table[0]);
  const col = (name: string) => {
    const i = header.findIndex((h) => h.toLowerCase() === name.toLowerCase());
    if (i < 0) throw new Error(`the table has no "${name}" column (it has ${header.join(', ')})`);
    return i;
  };
  const [rankCol, folderCol, importCol] = [col('Rank'), col('Folder'), col('May import')];
  const raw = table.slice(2).map((line) => {
    const cells = cellsOf(line);
    const rank = Number(cells[rankCol]);
    const entries = [...cells[folderCol].matchAll(/`([^`]+)`/g)].map((m) => entryOf(m[1]));
    if (!Number.isInteger(rank) || entries.length === 0)
      throw new Error(`a row needs a whole rank and a \`folder/\` or \`file.ts\`: ${line}`);
    return { rank, entries, imports: cells[importCol] };
  });
  const byBare = new Map<string, string[]>();
  for (const r of raw)
    for (const e of r.entries) byBare.set(bare(e), [...(byBare.get(bare(e)) ?? []), e]);
  const rows = raw.map(({ rank, entries, imports }): LayerRow => {
    if (imports === 'anything') return { rank, entries, mayImport: 'anything' };
    const names = /^(—|-|)$/.test(imports) ? [] : imports.split(',').map((n) => n.trim());
    const mayImport = new Set<string>();
    for (const n of names) {
      const found = byBare.get(n);
      if (!found)
        throw new Error(
          `"${n}" in the May import of ${entries.join(' ')} is no folder of the table`,
        );
      for (const e of found) mayImport.add(e);
    }
    return { rank, entries, mayImport };
  });
  const rowOf = new Map<string, LayerRow>();
  for (const row of rows)
    for (const e of row.entries) {
      if (rowOf.has(e)) throw new Error(`${e} is in two rows of the table`);
      rowOf.set(e, row);
    }
  return { rows, rowOf };
}

/** Whether the table lets a module of `from` import one of `to` (its own row always may). */
export function allows(t: LayerTable, from: string, to: string): boolean {
  const row = t.rowOf.get(from);
  if (!row) return false;
  return row.mayImport === 'anything' || row.entries.includes(to) || row.mayImport.has(to);
}
