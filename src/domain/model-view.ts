// The public face of a model (docs/api.md "Models"): what GET /v1/models and /models/detail answer.
// Built key by key from the definition, so price expressions, backends and limits never leak, and a
// key that does not apply to a field (values on a number, ...) is left out rather than sent as null.
import type { FieldDef, ModelDef, ModelOutput } from './catalog.ts';
import type { CompiledModel } from './catalog-load.ts';

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

/** The `Model` object (docs/api.md "Models") of a catalog model. */
export function toPublicModel(model: ModelDef | CompiledModel): PublicModel {
  const def = defOf(model);
  const output: ModelOutput =
    def.output.type === 'file'
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
