// A driver is one folder registered in one table (docs/architecture.md "Drivers"): each driver of
// src/backends/drivers.ts has its folder and its fakes, nothing outside src/backends/ branches on a
// driver's name, and domain's catalog loader knows only the drivers it is given: a protocol added
// beside the real ones is checked, compiled and flagged through its own entry alone.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DRIVERS } from '../../../src/backends/drivers.ts';
import { catalogLoader, CatalogError } from '../../../src/domain/catalog-load.ts';
import type { CatalogDriver } from '../../../src/domain/catalog-driver.ts';
import { isText } from '../../../src/domain/catalog-check.ts';
import { rawModel } from '../domain/catalog-fixtures.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SRC = path.join(ROOT, 'src');
const NAMES = Object.keys(DRIVERS);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** A driver compared or matched by name (`driver === 'cog'`, `driver: 'cog'`, `case 'cog'`). */
const NAMED = new RegExp(
  `(?:driver\\s*(?::|[!=]==?)\\s*|case\\s+)['"\`](?:${NAMES.join('|')})['"\`]`,
);

/** A protocol of a test's own: `echo`, a server answering with the text of its `say` CEL. */
interface EchoBinding {
  driver: 'echo';
  url: string;
  say: Record<string, string>;
}
const echo: CatalogDriver<EchoBinding> = {
  keys: ['url', 'say'],
  check(raw, bad) {
    if (!isText(raw.url)) return void bad('backend.url must be the echo server');
    return { driver: 'echo', url: raw.url, say: (raw.say ?? {}) as Record<string, string> };
  },
  checkOutput(output, bad) {
    if (output.type !== 'text') bad('the echo driver answers with text');
  },
  cel: (b) => ({ say: b.say }),
  celStrings: ['say'],
  chatServer: true,
};
const textModel = (backend: unknown) =>
  rawModel({
    kind: 'text',
    output: { type: 'text' },
    fields: [{ name: 'prompt', type: 'text', required: true, maxLength: 100 }],
    price: '1',
    backend,
  });
const problemsOf = (load: () => unknown) => {
  try {
    load();
  } catch (e) {
    if (e instanceof CatalogError) return e.problems;
    throw e;
  }
  return [];
};

describe('drivers', () => {
  it('are each a folder of src/backends/ with its catalog block, runtime and registration', () => {
    for (const name of NAMES)
      for (const file of ['catalog.ts', 'index.ts', 'driver.ts'])
        expect(fs.existsSync(path.join(SRC, 'backends', name, file)), `${name}/${file}`).toBe(true);
  });

  it('name their fakes, each a file under test/fakes/ (the built-in renderers have none)', () => {
    for (const [name, driver] of Object.entries(DRIVERS)) {
      if (!driver.everyRole) expect(driver.fakes.length, name).toBeGreaterThan(0);
      for (const fake of driver.fakes) {
        expect(fake).toMatch(/^test\/fakes\/[\w-]+\.ts$/);
        expect(fs.existsSync(path.join(ROOT, fake)), fake).toBe(true);
      }
    }
  });

  it('are not branched on by name outside src/backends/ (domain/ names none)', () => {
    const outside = sources(SRC).filter(
      (f) =>
        !path.relative(SRC, f).startsWith(`backends${path.sep}`) &&
        !path.relative(SRC, f).startsWith(`cli${path.sep}`) &&
        NAMED.test(fs.readFileSync(f, 'utf8')),
    );
    expect(outside.map((f) => path.relative(SRC, f))).toEqual([]);
    // (The command line is left out: `catalog import cog` writes a block of that driver's own.)
    expect(NAMED.test("if (b.driver === 'openai')")).toBe(true); // the check above can fail
  });

  it('are what the domain loader knows, and all it knows', () => {
    const none = catalogLoader({});
    expect(problemsOf(() => none.build({ models: [rawModel()] }))).toEqual([
      'model "t/a": backend.driver must be one of ',
    ]);
    const real = catalogLoader(DRIVERS);
    // Only a driver of the table's own keys: not one its prototype has.
    expect(
      problemsOf(() => real.build({ models: [rawModel({ backend: { driver: 'constructor' } })] })),
    ).toEqual([
      'model "t/a": backend.driver must be one of local, cog, comfyui, openai, replicate, fal',
    ]);
  });

  it('take a new protocol through its own entry: keys, check, output, CEL, chat server', () => {
    const loader = catalogLoader({ ...DRIVERS, echo });
    const c = loader.build({
      models: [
        textModel({ driver: 'echo', url: 'http://e', say: { reply: "'you said ' + prompt" } }),
      ],
    });
    const m = c.get('t/a')!;
    expect(m.def.backend).toEqual({
      driver: 'echo',
      url: 'http://e',
      say: { reply: "'you said ' + prompt" },
    });
    expect(m.backendCel.say!.evaluate({ prompt: 'hi' })).toEqual({ reply: 'you said hi' });
    expect(m.chatServer).toBe(true);
    expect(
      problemsOf(() =>
        loader.build({
          models: [
            rawModel({ id: 't/1', backend: { driver: 'echo', url: 'http://e', port: 1 } }),
            textModel({ driver: 'echo', say: {} }),
            textModel({ driver: 'echo', url: 'http://e', say: { n: 'size(prompt)' } }),
          ].map((x, i) => ({ ...x, id: `t/${i + 1}` })),
        }),
      ),
    ).toEqual([
      'model "t/1": unknown backend key "port" for driver echo',
      'model "t/1": the echo driver answers with text',
      'model "t/2": backend.url must be the echo server',
      expect.stringMatching(/^model "t\/3": backend say\.n must yield a string \(for inputs/),
    ]);
  });

  it('flag their chat servers in the compiled catalog', () => {
    const c = catalogLoader(DRIVERS).build({
      models: [
        textModel({ driver: 'local', renderer: 'shot-list' }),
        {
          ...textModel({
            driver: 'openai',
            url: 'http://vllm:8000/v1',
            model: 'm',
            messages: [{ role: 'user', content: 'prompt' }],
          }),
          id: 't/chat',
        },
      ],
    });
    expect([c.get('t/a')!.chatServer, c.get('t/chat')!.chatServer]).toEqual([false, true]);
  });
});
