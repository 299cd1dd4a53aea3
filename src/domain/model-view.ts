// The public face of a model (CONTRACT.md "Models"): what GET /v1/models and /models/detail answer.
// Built key by key from the definition, so price expressions, backends and limits never leak, and a
// key that does not apply to a field (values on a number, ...) is left out rather than sent as null.
import type { FieldDef, ModelDef, ModelOutput } from './catalog.ts';
import type { CompiledModel } from './catalog-load.ts';
import { URL_MAX_LENGTH } from './inputs.ts';

/** A field as the API shows it: the catalog's own field definition, which holds nothing private. */
export type PublicField = FieldDef;

export interface PublicModel {
  id: string;
  name: string;
  kind: ModelDef['kind'];
  description: string;
  output: ModelOutput;
  fields: PublicField[];
}

const defOf = (model: ModelDef | CompiledModel): ModelDef => ('def' in model ? model.def : model);

function toPublicField(f: FieldDef): PublicField {
  const out: PublicField = { name: f.name, type: f.type, required: f.required, default: f.default };
  if (f.description !== undefined) out.description = f.description;
  if (f.media !== undefined) out.media = f.media;
  if (f.values !== undefined) out.values = [...f.values];
  if (f.minimum !== undefined) out.minimum = f.minimum;
  if (f.maximum !== undefined) out.maximum = f.maximum;
  if (f.integer !== undefined) out.integer = f.integer;
  if (f.maxLength !== undefined) out.maxLength = f.maxLength;
  return out;
}

/** The CONTRACT `Model` object of a catalog model. */
export function toPublicModel(model: ModelDef | CompiledModel): PublicModel {
  const def = defOf(model);
  const output: ModelOutput = def.output.type === 'file'
    ? { type: 'file', contentType: def.output.contentType }
    : { type: 'text' };
  return {
    id: def.id,
    name: def.name,
    kind: def.kind,
    description: def.description,
    output,
    fields: def.fields.map(toPublicField),
  };
}

/**
 * A JSON Schema of a model's `inputs`, for documentation (OpenAPI) only: requests are checked by
 * inputs.ts, whose rules (code-point lengths, URL form, no NUL) a schema can only approximate.
 */
export function inputsJsonSchema(model: ModelDef | CompiledModel): Record<string, unknown> {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const f of defOf(model).fields) {
    const p: Record<string, unknown> = {};
    if (f.type === 'text') Object.assign(p, { type: 'string' }, f.maxLength !== undefined && { maxLength: f.maxLength });
    if (f.type === 'url') Object.assign(p, { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: URL_MAX_LENGTH });
    if (f.type === 'toggle') p.type = 'boolean';
    if (f.type === 'enum') p.enum = f.values;
    if (f.type === 'number') {
      p.type = f.integer ? 'integer' : 'number';
      if (f.minimum !== undefined) p.minimum = f.minimum;
      if (f.maximum !== undefined) p.maximum = f.maximum;
    }
    if (f.description !== undefined) p.description = f.description;
    if (f.default !== null) p.default = f.default;
    properties[f.name] = p;
  }
  const required = defOf(model).fields.filter((f) => f.required).map((f) => f.name);
  return { type: 'object', properties, required, additionalProperties: false };
}
