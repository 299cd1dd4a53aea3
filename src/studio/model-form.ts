// A model's form, generated from its field descriptors, and the way back: form strings to the typed
// inputs the API takes. The conversion only reads types (a number field's text becomes a number when it
// is one); every rule (required, bounds, lengths, allowed values) stays the API's own validation, so the
// studio shows exactly the API's messages.
import type { FieldDef, ModelDef } from '../domain/catalog.ts';
import { field } from './form-body.ts';
import { valueLabel } from './presenters.ts';

export type Widget = 'text' | 'textarea' | 'url' | 'number' | 'toggle' | 'select';

export interface FormField {
  def: FieldDef;
  widget: Widget;
  id: string;
  value: string;
  checked: boolean;
  error: string | null;
  options: { value: string; label: string; selected: boolean }[];
  step: string | null;
}

/** Text fields that may be long get a multi-line box. */
const LONG_TEXT = 200;

const widgetOf = (f: FieldDef): Widget => {
  switch (f.type) {
    case 'text':
      return f.maxLength === undefined || f.maxLength > LONG_TEXT ? 'textarea' : 'text';
    case 'url':
      return 'url';
    case 'number':
      return 'number';
    case 'toggle':
      return 'toggle';
    case 'enum':
      return 'select';
  }
};

/** The fields to show, filled with `values` (as typed by the person) or else the defaults. */
export function formFields(
  model: ModelDef,
  values: Record<string, string> | null,
  errors: Record<string, string>,
): FormField[] {
  return model.fields.map((f) => {
    const raw = values ? values[f.name] : undefined;
    const value =
      raw ??
      (values && f.type === 'toggle' ? 'false' : f.default === null ? '' : String(f.default));
    return {
      def: f,
      widget: widgetOf(f),
      id: `f-${f.name}`,
      value,
      checked: value === 'true',
      error: errors[f.name] ?? null,
      options: (f.values ?? []).map((v) => ({
        value: String(v),
        label: valueLabel(f, v),
        selected: String(v) === value,
      })),
      step: f.type === 'number' ? (f.integer ? '1' : 'any') : null,
    };
  });
}

/** The form's strings, per field, as typed (for showing the form again). */
export function formValues(model: ModelDef, body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of model.fields) {
    const v = field(body, f.name);
    if (v !== undefined) out[f.name] = v;
  }
  return out;
}

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** The API's `inputs` from the form: an empty box is left out (the default applies, or "is required"). */
export function formInputs(model: ModelDef, body: unknown): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const f of model.fields) {
    const raw = field(body, f.name);
    if (f.type === 'toggle') {
      inputs[f.name] = raw === 'true' || raw === 'on';
      continue;
    }
    if (raw === undefined || raw.trim() === '') continue;
    if (f.type === 'number') inputs[f.name] = NUMBER.test(raw.trim()) ? Number(raw.trim()) : raw;
    else if (f.type === 'enum') {
      const match = (f.values ?? []).find((v) => String(v) === raw);
      inputs[f.name] = match ?? raw;
    } else if (f.type === 'url') inputs[f.name] = raw.trim();
    else inputs[f.name] = raw;
  }
  return inputs;
}

/** The API's INVALID_INPUT details as messages per field name (`inputs.duration` → `duration`). */
export function fieldErrors(details: unknown[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of (details ?? []) as { field?: string; message?: string }[]) {
    if (typeof d.field === 'string' && d.field.startsWith('inputs.'))
      out[d.field.slice(7)] ??= d.message ?? 'is invalid';
  }
  return out;
}
