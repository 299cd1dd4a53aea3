// CEL expressions that turn a model's resolved inputs into what its backend expects
// (docs/backends.md "What every driver shares": each driver names its own, catalog-driver.ts
// `cel`). They live in the environment of `price` (pricing.ts: the same variables, types and
// limits), are parsed and type-checked once at catalog load, and only run per render. Results
// become plain JSON: CEL ints (BigInt) become numbers, CEL maps objects.
import type { FieldDef, ResolvedInputs } from './catalog.ts';
import { BASE_ENV, celContext, celTypeOf } from './pricing.ts';

export class MappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MappingError';
  }
}

/** Named expressions compiled together; `evaluate` gives each name's JSON value (absent when it yields null). */
export interface Mapping {
  readonly names: readonly string[];
  evaluate(resolved: ResolvedInputs): Record<string, unknown>;
}

const reason = (e: unknown) => {
  const err = e as { summary?: unknown; message?: unknown };
  return String(typeof err.summary === 'string' ? err.summary : (err.message ?? e));
};

/** Compiles every expression; throws MappingError listing each that does not parse or type-check. */
export function compileMapping(
  fields: readonly FieldDef[],
  exprs: Record<string, string>,
  what: string,
): Mapping {
  const env = BASE_ENV.clone().registerVariable('inputs', 'map');
  for (const f of fields) env.registerVariable(f.name, celTypeOf(f));
  const programs: [string, (ctx: Record<string, unknown>) => unknown][] = [];
  const problems: string[] = [];
  for (const [name, expr] of Object.entries(exprs)) {
    if (typeof expr !== 'string' || expr.trim() === '') {
      problems.push(`${what}.${name} must be a CEL expression (a string)`);
      continue;
    }
    try {
      const run = env.parse(expr);
      const checked = env.check(expr);
      if (!checked.valid) {
        problems.push(`${what}.${name} does not type-check: ${reason(checked.error)}`);
        continue;
      }
      programs.push([name, run]);
    } catch (e) {
      problems.push(`${what}.${name} does not parse: ${reason(e)}`);
    }
  }
  if (problems.length > 0) throw new MappingError(problems.join('; '));
  return {
    names: programs.map(([n]) => n),
    evaluate(resolved) {
      const ctx = celContext(fields, resolved);
      const out: Record<string, unknown> = {};
      for (const [name, run] of programs) {
        let v: unknown;
        try {
          v = toJson(run(ctx));
        } catch (e) {
          throw new MappingError(`${what}.${name} failed: ${reason(e)}`);
        }
        if (v !== null && v !== undefined) out[name] = v;
      }
      return out;
    },
  };
}

/** A CEL value as JSON; throws on what JSON cannot carry (bytes, types, an int beyond 2^53). */
export function toJson(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new MappingError(`yields ${v}, which JSON cannot carry`);
    return v;
  }
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
      throw new MappingError(`yields ${v}, beyond a safe integer`);
    return Number(v);
  }
  if (Array.isArray(v)) return v.map(toJson);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toJson(x)]));
  if (
    typeof v === 'object' &&
    v !== null &&
    [Object.prototype, null].includes(Object.getPrototypeOf(v) as object | null)
  ) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]));
  }
  throw new MappingError(`yields a value JSON cannot carry (${typeof v})`);
}
