// A model's inputs as a JSON Schema (draft 2020-12, OpenAPI 3.1's dialect), derived from the same field
// descriptors the request checker is compiled from, so the published schema and the checks cannot
// disagree. Published in the OpenAPI document and as `inputSchema` on /v1/models/detail.
import type { FieldDef, ModelDef } from './catalog.ts';
import { URL_MAX_LENGTH } from './inputs.ts';

export type JsonSchema = Record<string, unknown>;

function fieldSchema(f: FieldDef): JsonSchema {
  const s: JsonSchema = {};
  switch (f.type) {
    case 'text':
      s.type = 'string';
      if (f.required) s.minLength = 1;
      if (f.maxLength !== undefined) s.maxLength = f.maxLength;
      break;
    case 'url':
      // Form only (docs/api.md "Inputs"): an absolute http(s) address; whether it can be fetched is known at render time.
      s.type = 'string';
      s.format = 'uri';
      s.pattern = '^[hH][tT][tT][pP][sS]?://';
      s.maxLength = URL_MAX_LENGTH;
      if (f.media !== undefined) s['x-media'] = f.media;
      break;
    case 'number':
      s.type = f.integer ? 'integer' : 'number';
      if (f.minimum !== undefined) s.minimum = f.minimum;
      if (f.maximum !== undefined) s.maximum = f.maximum;
      break;
    case 'toggle':
      s.type = 'boolean';
      break;
    case 'enum':
      s.enum = [...(f.values ?? [])];
      break;
  }
  if (f.description !== undefined) s.description = f.description;
  if (f.default !== null) s.default = f.default;
  return s;
}

/** The JSON Schema of a model's `inputs` object: unknown names refused, required fields listed. */
export function inputSchemaOf(def: ModelDef): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const f of def.fields) properties[f.name] = fieldSchema(f);
  return {
    type: 'object',
    title: `Inputs of ${def.id}`,
    properties,
    required: def.fields.filter((f) => f.required).map((f) => f.name),
    additionalProperties: false,
  };
}
