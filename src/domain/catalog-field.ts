// One field of a catalog model: its name, type, label, description, default and the keys of its type.
import type { FieldDef, FieldType } from './catalog.ts';
import { compileFieldCheck } from './inputs.ts';
import { isObject, isPositiveInt, isText, type Raw, type Report } from './catalog-check.ts';

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
// A field is also a variable of the price expression: CEL keywords and type names cannot be one, and
// `inputs` is the map of all of them.
const RESERVED = new Set(
  (
    'inputs true false null in as break const continue else for function if import let loop ' +
    'package namespace return var void while int uint double bool string bytes list map null_type type dyn ' +
    'optional google'
  ).split(' '),
);
const FIELD_KEYS = ['name', 'type', 'required', 'default', 'label', 'description'];
const TYPE_KEYS: Record<FieldType, string[]> = {
  text: ['maxLength'],
  url: ['media'],
  number: ['minimum', 'maximum', 'integer'],
  toggle: [],
  enum: ['values', 'labels'],
};

/** An enum's `labels`: what people read for each value (keyed by the value), at most 100 chars. */
function checkLabels(raw: unknown, def: FieldDef, bad: Report): void {
  if (!isObject(raw)) return bad('labels must be a mapping of values to the text shown for each');
  const known = new Set((def.values ?? []).map(String));
  const labels: Record<string, string> = {};
  for (const [value, text] of Object.entries(raw)) {
    if (!known.has(value)) bad(`labels names ${JSON.stringify(value)}, which is not one of values`);
    else if (!isText(text) || text.length > 100)
      bad(
        `labels of ${JSON.stringify(value)} must be a non-empty string of at most 100 characters`,
      );
    else labels[value] = text;
  }
  def.labels = labels;
}

/** The type-specific part of a field: bounds, values, labels, length, media. */
function checkTypeKeys(raw: Raw, def: FieldDef, bad: Report): void {
  if (def.type === 'url' && raw.media !== undefined) {
    if (raw.media === 'image') def.media = 'image';
    else bad('media must be "image"');
  } else if (def.type === 'enum') {
    const values = raw.values;
    const same =
      Array.isArray(values) &&
      values.length > 0 &&
      (values.every((v) => typeof v === 'string') ||
        values.every((v) => typeof v === 'number' && Number.isFinite(v)));
    if (!same) return bad('values must be a non-empty list of strings, or of numbers (not mixed)');
    const dup: unknown = (values as unknown[]).find(
      (v, i) => (values as unknown[]).indexOf(v) !== i,
    );
    if (dup !== undefined) bad(`values lists ${JSON.stringify(dup)} twice`);
    def.values = values as (string | number)[];
    if (raw.labels !== undefined) checkLabels(raw.labels, def, bad);
  } else if (def.type === 'number') {
    const integer = raw.integer ?? false;
    if (typeof integer !== 'boolean') bad('integer must be true or false');
    for (const k of ['minimum', 'maximum'] as const) {
      const v = raw[k];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${k} must be a finite number`);
      else if (integer === true && !Number.isSafeInteger(v))
        bad(`${k} must be an integer, as the field is`);
      else def[k] = v;
    }
    if (def.minimum !== undefined && def.maximum !== undefined && def.minimum > def.maximum) {
      bad(`minimum ${def.minimum} is above maximum ${def.maximum}`);
    }
    def.integer = integer === true;
  } else if (def.type === 'text' && raw.maxLength !== undefined) {
    if (isPositiveInt(raw.maxLength)) def.maxLength = raw.maxLength;
    else bad('maxLength must be a positive integer');
  }
}

export function checkField(
  raw: unknown,
  index: number,
  where: string,
  report: Report,
): FieldDef | undefined {
  const label =
    isObject(raw) && typeof raw.name === 'string'
      ? `${where} field "${raw.name}"`
      : `${where} field #${index + 1}`;
  let problems = 0;
  const bad: Report = (m) => {
    problems++;
    report(`${label}: ${m}`);
  };
  if (!isObject(raw)) return void bad('must be a mapping');
  const { name, type } = raw;
  if (typeof name !== 'string' || !FIELD_NAME.test(name))
    bad('name must be an identifier (letters, digits and _, at most 64)');
  else if (RESERVED.has(name) || name.startsWith('__')) bad(`name "${name}" is reserved`);
  if (typeof type !== 'string' || !(type in TYPE_KEYS))
    return void bad('type must be one of text, url, number, toggle, enum');
  const fieldType = type as FieldType;
  for (const k of Object.keys(raw)) {
    if (FIELD_KEYS.includes(k) || TYPE_KEYS[fieldType].includes(k)) continue;
    bad(
      Object.values(TYPE_KEYS).some((ks) => ks.includes(k))
        ? `"${k}" does not apply to a ${type} field`
        : `unknown key "${k}"`,
    );
  }
  const required = raw.required ?? false;
  if (typeof required !== 'boolean') bad('required must be true or false');
  const def: FieldDef = {
    name: String(name),
    type: fieldType,
    required: required === true,
    default: null,
  };
  if (raw.label !== undefined) {
    if (isText(raw.label) && raw.label.length <= 100) def.label = raw.label;
    else bad('label must be a non-empty string of at most 100 characters');
  }
  if (raw.description !== undefined) {
    if (isText(raw.description)) def.description = raw.description;
    else bad('description must be a non-empty string');
  }
  checkTypeKeys(raw, def, bad);
  const dflt = raw.default ?? null;
  if (dflt !== null && problems === 0) {
    // Checked with the very checker requests go through, so a default is always a value a client could send.
    if (def.required) bad('a required field takes no default (leave it out or null)');
    else if (def.type === 'url') bad('a url field takes no default (leave it out or null)');
    else {
      const why = compileFieldCheck(def)(dflt);
      if (why === undefined) def.default = dflt as FieldDef['default'];
      else bad(`default ${JSON.stringify(dflt)} ${why}`);
    }
  }
  return problems === 0 ? def : undefined;
}
