// Prices resolved inputs with the model's CEL expression (docs/backends.md, docs/api.md): a safe, side-effect
// free language, parsed and type-checked once at catalog load. The same resolved inputs always give the
// same price, so the quote, POST /generations and the studio agree.
//
// How values reach CEL (@marcbachmann/cel-js represents CEL ints as BigInt and doubles as JS numbers,
// and never mixes them: `5.0 * 6` is an error): integer number fields and enums of integers are CEL
// `int` (BigInt); other numbers are `double`; text and url are `string`; toggles `bool`. Each field is a
// bare variable and a key of the `inputs` map. An absent optional field (default null) is in neither,
// so an expression tests it with `has(inputs.seed)` or `inputs.?seed.orValue(0)`.
import { Environment } from '@marcbachmann/cel-js';
import type { FieldDef, InputValue, ModelDef, ResolvedInputs } from './catalog.ts';

export type CelType = 'int' | 'double' | 'string' | 'bool';

/** A price expression that is wrong: it does not parse, type-check, or yields a bad value. */
export class PriceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PriceError';
  }
}

export interface PriceProgram {
  readonly expression: string;
  /** Integer cents ≥ 0 for resolved inputs; throws PriceError otherwise. */
  evaluate(resolved: ResolvedInputs): number;
}

// Optional types give `inputs.?name.orValue(x)`. Limits keep a hostile catalog from building a huge AST.
export const BASE_ENV = new Environment({
  enableOptionalTypes: true,
  limits: { maxAstNodes: 5000, maxDepth: 64 },
});

export function celTypeOf(f: FieldDef): CelType {
  switch (f.type) {
    case 'text':
    case 'url':
      return 'string';
    case 'toggle':
      return 'bool';
    case 'number':
      return f.integer ? 'int' : 'double';
    case 'enum':
      if ((f.values ?? []).every((v) => typeof v === 'string')) return 'string';
      return (f.values ?? []).every((v) => Number.isSafeInteger(v)) ? 'int' : 'double';
  }
}

// cel-js errors carry a one-line `summary`; `message` adds a multi-line source excerpt.
const reason = (e: unknown) => {
  const err = e as { summary?: unknown; message?: unknown };
  return String(typeof err.summary === 'string' ? err.summary : (err.message ?? e));
};

/** Parses and type-checks a model's price; throws PriceError saying why it is unusable. */
export function compilePrice(def: Pick<ModelDef, 'fields' | 'price'>): PriceProgram {
  const env = BASE_ENV.clone().registerVariable('inputs', 'map');
  const fields = def.fields.map((f) => ({
    name: f.name,
    toCel: celTypeOf(f) === 'int' ? toBigInt : same,
  }));
  try {
    for (const f of def.fields) env.registerVariable(f.name, celTypeOf(f));
  } catch (e) {
    throw new PriceError(`cannot declare the fields as variables: ${reason(e)}`); // the loader refuses such names first
  }
  let run: (ctx: Record<string, unknown>) => unknown;
  try {
    run = env.parse(def.price);
  } catch (e) {
    throw new PriceError(`does not parse: ${reason(e)}`);
  }
  const checked = env.check(def.price);
  if (!checked.valid) throw new PriceError(`does not type-check: ${reason(checked.error)}`);
  // `dyn` (e.g. a bare `inputs.x`) is only known at run time; the load-time samples cover it.
  if (!['int', 'uint', 'dyn'].includes(checked.type ?? '')) {
    throw new PriceError(`must yield an int of cents, not ${checked.type}`);
  }
  return {
    expression: def.price,
    evaluate(resolved) {
      let out: unknown;
      try {
        const inputs = new Map<string, unknown>(); // a Map: `has(inputs.constructor)` must not see a prototype
        const ctx: Record<string, unknown> = { inputs };
        for (const f of fields) {
          if (!Object.hasOwn(resolved, f.name)) continue;
          const v = f.toCel(resolved[f.name]); // throws on a fraction: inputs not resolved by inputs.ts
          inputs.set(f.name, v);
          ctx[f.name] = v;
        }
        out = run(ctx);
      } catch (e) {
        throw new PriceError(`failed: ${reason(e)}`);
      }
      return toCents(out);
    },
  };
}

/** The variables an expression over these fields sees for resolved inputs: bare names and the `inputs` map. */
export function celContext(
  fields: readonly FieldDef[],
  resolved: ResolvedInputs,
): Record<string, unknown> {
  const inputs = new Map<string, unknown>(); // a Map: `has(inputs.constructor)` must not see a prototype
  const ctx: Record<string, unknown> = { inputs };
  for (const f of fields) {
    if (!Object.hasOwn(resolved, f.name)) continue;
    const v = celTypeOf(f) === 'int' ? toBigInt(resolved[f.name]) : resolved[f.name];
    inputs.set(f.name, v);
    ctx[f.name] = v;
  }
  return ctx;
}

function same(v: InputValue): unknown {
  return v;
}

function toBigInt(v: InputValue): unknown {
  return BigInt(v);
}

/** Only an integer is a price: a double, even 45.0, means the expression is wrong, not "round it". */
function toCents(out: unknown): number {
  if (typeof out !== 'bigint') {
    throw new PriceError(
      `must yield an int of cents, got ${typeof out === 'number' ? `the double ${out}` : typeof out}`,
    );
  }
  if (out < 0n) throw new PriceError(`must not be negative, got ${out}`);
  if (out > BigInt(Number.MAX_SAFE_INTEGER)) throw new PriceError(`is too large, got ${out}`);
  return Number(out);
}

/** The price in integer cents of already resolved inputs. A failure is a catalog bug (500), named by model. */
export function priceOf(
  model: { readonly id: string; readonly priceProgram: PriceProgram },
  resolved: ResolvedInputs,
): number {
  try {
    return model.priceProgram.evaluate(resolved);
  } catch (e) {
    throw new Error(`price of model ${model.id} ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
}
