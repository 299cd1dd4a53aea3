// The layers of src/ (docs/architecture.md): a module imports only from its own layer or the layers
// below it. http and studio → services → queue → backends, storage, webhooks → domain, db, metrics.
// The composition root (app.ts, main.ts) and the command line (cli/) sit above everything.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../../src');

const RANK: Record<string, number> = {
  domain: 0, db: 0, metrics: 0, net: 0, 'config.ts': 0,
  backends: 1, storage: 1, webhooks: 1,
  queue: 2,
  services: 3,
  web: 3.5, // shared request plumbing of http and studio
  http: 4, studio: 4,
  cli: 5, 'app.ts': 5, 'main.ts': 5,
};

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

describe('layers', () => {
  const files = sources(SRC);

  it('knows the layer of every top-level entry of src/', () => {
    const unknown = [...new Set(files.map(layerOf))].filter((l) => !(l in RANK));
    expect(unknown).toEqual([]);
  });

  it('has no import from a layer above the importing module', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const target = path.resolve(path.dirname(file), m[1]);
        const to = layerOf(target);
        if (RANK[to] > RANK[from]) upward.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
