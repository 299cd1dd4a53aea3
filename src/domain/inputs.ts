// Checks a request's inputs against a model's fields and applies defaults (docs/api.md "Inputs").
// Each field gets a checker closure built once when the catalog loads; a request only runs them. They
// are hand-rolled rather than an ajv schema so every bad field gets exactly one short, exact message.
import type { FieldDef, InputValue, ResolvedInputs } from './catalog.ts';
import { ApiError, invalidInput, type FieldProblem } from './errors.ts';

/** Why a present, non-null value is refused, or undefined when it is acceptable. */
export type ValueCheck = (value: unknown) => string | undefined;
export interface CompiledField {
  readonly def: FieldDef;
  readonly check: ValueCheck;
}
export interface InputSpec {
  readonly fields: readonly CompiledField[];
  readonly names: ReadonlySet<string>;
}

/**
 * What these functions need of a compiled model and of the catalog (catalog-load.ts CompiledModel and
 * Catalog), named here so that this module does not import the catalog's loader, which imports it.
 */
export interface WithInputSpec {
  readonly inputSpec: InputSpec;
}
export interface ModelLookup<M extends WithInputSpec> {
  get(id: string): M | undefined;
}

export const URL_MAX_LENGTH = 2048;
// Unknown names are echoed back; bound how many and how long, so a hostile body cannot bloat the answer.
const MAX_UNKNOWN_REPORTED = 50;
/** Most names an `inputs` object may have; far above any model's field count, it bounds the work per request. */
export const MAX_INPUT_NAMES = 100;
const MAX_NAME_ECHO = 200;
// Postgres jsonb refuses NUL and unpaired surrogates, and a string with them is no real text anyway.
const LONE_SURROGATE = /\p{Cs}/u;
// The WHATWG parser silently drops tabs/newlines, trims spaces and reads '\' as '/': refuse them
// instead, so the address we store is exactly the one that was checked.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const URL_FORBIDDEN = /[\u0000-\u0020\u007f\\]/;
const URL_SCHEME = /^https?:\/\//i;
const NOT_URL = 'must be an absolute http or https URL';

/** True when a string has more than `max` Unicode code points (what "characters" means here). */
function codePointsOver(s: string, max: number): boolean {
  if (s.length <= max) return false; // UTF-16 units never undercount code points
  let n = 0;
  for (const _ of s) if (++n > max) return true;
  return false;
}

function describeNumber(f: FieldDef): string {
  const what = f.integer ? 'must be an integer' : 'must be a number';
  if (f.minimum !== undefined && f.maximum !== undefined)
    return `${what} between ${f.minimum} and ${f.maximum}`;
  if (f.minimum !== undefined) return `${what} of at least ${f.minimum}`;
  if (f.maximum !== undefined) return `${what} of at most ${f.maximum}`;
  return what;
}

function checkUrl(v: unknown): string | undefined {
  if (typeof v !== 'string') return NOT_URL;
  if (codePointsOver(v, URL_MAX_LENGTH)) return `must be at most ${URL_MAX_LENGTH} characters`;
  if (!URL_SCHEME.test(v) || URL_FORBIDDEN.test(v) || LONE_SURROGATE.test(v)) return NOT_URL;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return NOT_URL;
  }
  if (url.hostname === '') return NOT_URL;
  if (url.username !== '' || url.password !== '')
    return 'must not contain credentials (user:password@)';
  return undefined;
}

/** Builds the checker of one field; also used by the catalog loader to check defaults. */
export function compileFieldCheck(f: FieldDef): ValueCheck {
  switch (f.type) {
    case 'number': {
      const min = f.minimum ?? -Infinity;
      const max = f.maximum ?? Infinity;
      const integer = f.integer === true;
      const msg = describeNumber(f);
      // Safe integers only: prices turn integers into 64-bit CEL ints, and 1e308 is "an integer" too.
      return (v) =>
        typeof v !== 'number' ||
        !Number.isFinite(v) ||
        v < min ||
        v > max ||
        (integer && !Number.isSafeInteger(v))
          ? msg
          : undefined;
    }
    case 'toggle':
      return (v) => (typeof v === 'boolean' ? undefined : 'must be true or false');
    case 'enum': {
      const values: readonly unknown[] = f.values ?? [];
      const msg = `must be one of ${values.map((x) => JSON.stringify(x)).join(', ')}`;
      return (v) => (values.includes(v) ? undefined : msg); // strict: '5' is not 5
    }
    case 'text': {
      const { maxLength, required } = f;
      return (v) => {
        if (typeof v !== 'string') return 'must be a string';
        if (required && v === '') return 'must not be empty';
        if (maxLength !== undefined && codePointsOver(v, maxLength))
          return `must be at most ${maxLength} characters`;
        if (v.includes('\u0000')) return 'must not contain NUL characters';
        if (LONE_SURROGATE.test(v)) return 'must be valid Unicode text';
        return undefined;
      };
    }
    case 'url':
      return checkUrl;
  }
}

export function compileInputSpec(fields: readonly FieldDef[]): InputSpec {
  return {
    fields: fields.map((def) => ({ def, check: compileFieldCheck(def) })),
    names: new Set(fields.map((f) => f.name)),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const echo = (name: string) =>
  name.length > MAX_NAME_ECHO ? `${name.slice(0, MAX_NAME_ECHO)}…` : name;

/** Checks `inputs`, pushing one problem per bad field; returns the resolved inputs in field order. */
export function collectInputs(
  spec: InputSpec,
  inputs: unknown,
  problems: FieldProblem[],
): ResolvedInputs {
  const out: ResolvedInputs = {};
  if (!isObject(inputs)) {
    problems.push({ field: 'inputs', message: 'must be a JSON object' });
    return out;
  }
  const names = Object.keys(inputs);
  if (names.length > MAX_INPUT_NAMES) {
    problems.push({
      field: 'inputs',
      message: `must have at most ${MAX_INPUT_NAMES} fields (it has ${names.length})`,
    });
    return out;
  }
  for (const { def, check } of spec.fields) {
    // hasOwn: a field named like an Object.prototype member must not read the prototype.
    const raw = Object.hasOwn(inputs, def.name) ? inputs[def.name] : undefined;
    if (raw === undefined || raw === null) {
      if (def.required) problems.push({ field: `inputs.${def.name}`, message: 'is required' });
      else if (def.default !== null) out[def.name] = def.default;
      continue;
    }
    const why = check(raw);
    if (why !== undefined) problems.push({ field: `inputs.${def.name}`, message: why });
    else out[def.name] = Object.is(raw, -0) ? 0 : (raw as InputValue); // -0 prices and stores as 0
  }
  let unknown = 0;
  for (const name of names) {
    if (spec.names.has(name)) continue;
    if (++unknown <= MAX_UNKNOWN_REPORTED)
      problems.push({ field: `inputs.${echo(name)}`, message: 'is not a field of this model' });
  }
  if (unknown > MAX_UNKNOWN_REPORTED) {
    problems.push({
      field: 'inputs',
      message: `has ${unknown - MAX_UNKNOWN_REPORTED} more unknown fields`,
    });
  }
  return out;
}

/** The resolved inputs (defaults applied, keys in field order), or 400 INVALID_INPUT naming every bad field. */
export function resolveInputs(model: WithInputSpec, inputs: unknown): ResolvedInputs {
  const problems: FieldProblem[] = [];
  const resolved = collectInputs(model.inputSpec, inputs, problems);
  if (problems.length > 0) throw invalidInput(problems);
  return resolved;
}

/** Reads `{ modelId, inputs }`, pushing problems for either; a body that is not an object is INVALID_REQUEST. */
function readBody(
  body: unknown,
  problems: FieldProblem[],
): { modelId?: string; inputs?: Record<string, unknown> } {
  if (!isObject(body))
    throw new ApiError('INVALID_REQUEST', 'The request body must be a JSON object.');
  const out: { modelId?: string; inputs?: Record<string, unknown> } = {};
  const { modelId, inputs } = body;
  if (modelId === undefined || modelId === null)
    problems.push({ field: 'modelId', message: 'is required' });
  else if (typeof modelId !== 'string')
    problems.push({ field: 'modelId', message: 'must be a string' });
  else out.modelId = modelId;
  if (inputs === undefined || inputs === null)
    problems.push({ field: 'inputs', message: 'is required' });
  else if (!isObject(inputs)) problems.push({ field: 'inputs', message: 'must be a JSON object' });
  else out.inputs = inputs;
  return out;
}

/** The shape of a `{ modelId, inputs }` body, without looking the model up. */
export function validateRequestBody(body: unknown): {
  modelId: string;
  inputs: Record<string, unknown>;
} {
  const problems: FieldProblem[] = [];
  const { modelId, inputs } = readBody(body, problems);
  if (problems.length > 0 || modelId === undefined || inputs === undefined)
    throw invalidInput(problems);
  return { modelId, inputs };
}

/** Everything POST /quote and /generations check on the body, every problem reported at once. */
export function parseRenderRequest<M extends WithInputSpec>(
  catalog: ModelLookup<M>,
  body: unknown,
): { model: M; inputs: ResolvedInputs } {
  const problems: FieldProblem[] = [];
  const { modelId, inputs } = readBody(body, problems);
  const model = modelId === undefined ? undefined : catalog.get(modelId);
  if (modelId !== undefined && model === undefined) {
    problems.unshift({
      field: 'modelId',
      message: `unknown model ${JSON.stringify(echo(modelId))}`,
    });
  }
  const resolved = model && inputs ? collectInputs(model.inputSpec, inputs, problems) : {};
  if (problems.length > 0 || model === undefined) throw invalidInput(problems);
  return { model, inputs: resolved };
}
