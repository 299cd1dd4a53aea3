// Structural check of a catalog document: every key, type and bound of every model and field. All
// problems are collected, each naming its model and field, so an operator fixes a catalog in one pass.
// Prices are checked by catalog-load.ts, once the fields they read are known to be sound.
import type { FieldDef, ModelDef, ModelOutput } from './catalog.ts';
import { checkBackend } from './catalog-backend.ts';
import type { CatalogDrivers, ReadJson } from './catalog-driver.ts';
import { checkExamples, noFindFile, type FindFile } from './catalog-examples.ts';
import { checkField } from './catalog-field.ts';
import {
  isObject,
  isPositiveInt,
  isText,
  unknownKeys,
  type Raw,
  type Report,
} from './catalog-check.ts';

const noFiles: ReadJson = () => {
  throw new Error('files cannot be read here');
};

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;
const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;
const KINDS = ['video', 'image', 'text'];
const MODEL_KEYS = [
  'id',
  'name',
  'kind',
  'description',
  'output',
  'fields',
  'price',
  'backend',
  'timeLimitSeconds',
  'maxAttempts',
  'concurrency',
  'openai',
  'examples',
];
function checkOutput(raw: unknown, bad: Report): ModelOutput | undefined {
  if (isObject(raw) && raw.type === 'text') {
    unknownKeys(raw, ['type'], bad, 'output key');
    return { type: 'text' };
  }
  if (isObject(raw) && raw.type === 'file') {
    unknownKeys(raw, ['type', 'contentType'], bad, 'output key');
    if (typeof raw.contentType === 'string' && CONTENT_TYPE.test(raw.contentType))
      return { type: 'file', contentType: raw.contentType };
    bad('output.contentType must be a media type such as video/mp4');
    return undefined;
  }
  bad('output must be {type: file, contentType} or {type: text}');
  return undefined;
}

/** One model: its ModelDef when sound, else undefined with every problem reported. */
function checkModel(
  raw: unknown,
  index: number,
  seen: Set<string>,
  report: Report,
  files: { readJson: ReadJson; findFile: FindFile; drivers: CatalogDrivers },
): ModelDef | undefined {
  const label =
    isObject(raw) && typeof raw.id === 'string' ? `model "${raw.id}"` : `model #${index + 1}`;
  let problems = 0;
  const bad: Report = (m) => {
    problems++;
    report(`${label}: ${m}`);
  };
  const badField: Report = (m) => {
    problems++;
    report(m);
  };
  if (!isObject(raw)) return void bad('must be a mapping');
  unknownKeys(raw, MODEL_KEYS, bad);
  const id = raw.id;
  if (typeof id !== 'string' || !MODEL_ID.test(id) || id.length > 128)
    bad('id must be <vendor>/<model_name> (letters, digits, . _ -)');
  else if (seen.has(id)) bad('id is already used by an earlier model');
  else seen.add(id);
  for (const k of ['name', 'description', 'price'] as const)
    if (!isText(raw[k])) bad(`${k} must be a non-empty string`);
  if (typeof raw.kind !== 'string' || !KINDS.includes(raw.kind))
    bad(`kind must be one of ${KINDS.join(', ')}`);
  const output = checkOutput(raw.output, bad);
  if (output && (raw.kind === 'text') !== (output.type === 'text'))
    bad('a text model has output {type: text}; other kinds a file');
  const fields: FieldDef[] = [];
  if (!Array.isArray(raw.fields)) bad('fields must be a list');
  else {
    raw.fields.forEach((f, j) => {
      const def = checkField(f, j, label, badField);
      if (!def) return;
      if (fields.some((g) => g.name === def.name))
        badField(`${label} field "${def.name}": name is used twice`);
      else fields.push(def);
    });
  }
  const backend = checkBackend(raw.backend, bad, files.readJson, files.drivers);
  if (backend && output) files.drivers[backend.driver].checkOutput?.(output, bad);
  for (const k of ['timeLimitSeconds', 'maxAttempts'] as const)
    if (!isPositiveInt(raw[k])) bad(`${k} must be a positive integer`);
  if (raw.concurrency !== undefined && raw.concurrency !== null && !isPositiveInt(raw.concurrency))
    bad('concurrency must be a positive integer (renders at once, cluster-wide)');
  const openai = checkOpenAi(raw, fields, bad);
  const examples =
    output && problems === 0
      ? checkExamples(raw.examples, fields, output, files.findFile, bad)
      : [];
  if (problems > 0 || !output || !backend) return undefined;
  return {
    id: id as string,
    name: raw.name as string,
    kind: raw.kind as ModelDef['kind'],
    description: raw.description as string,
    output,
    fields,
    price: raw.price as string,
    backend,
    timeLimitSeconds: raw.timeLimitSeconds as number,
    maxAttempts: raw.maxAttempts as number,
    ...(typeof raw.concurrency === 'number' ? { concurrency: raw.concurrency } : {}),
    ...(openai ? { openai } : {}),
    ...(examples.length > 0 ? { examples } : {}),
  };
}

/**
 * `openai: { input: <field> }`: where the last user message of an OpenAI-style chat request goes (a text
 * model offered at /openai/v1 has it: docs/api.md "OpenAI-compatible endpoints"); it names a text field,
 * and a chat request can fill no other field, so no other field may be required.
 */
function checkOpenAi(raw: Raw, fields: FieldDef[], bad: Report): { input: string } | undefined {
  const o = raw.openai;
  // Optional: a text model without it is simply not offered at /openai/v1 (catalogs written before
  // those endpoints keep loading).
  if (o === undefined || o === null) return undefined;
  if (raw.kind !== 'text')
    return void bad('openai: only text models are offered through /openai/v1');
  if (!isObject(o)) return void bad('openai must be a mapping { input: <text field> }');
  unknownKeys(o, ['input'], bad, 'openai key');
  const field = fields.find((f) => f.name === o.input);
  if (typeof o.input !== 'string' || !field)
    return void bad("openai.input must name one of the model's fields");
  if (field.type !== 'text')
    return void bad(`openai.input: field "${field.name}" is not a text field`);
  const other = fields.find((f) => f.required && f.name !== field.name);
  if (other)
    return void bad(
      `openai.input: field "${other.name}" is required, but a chat request can only fill "${field.name}"`,
    );
  return { input: field.name };
}

/**
 * Every sound model in file order, and a line per problem (empty when the document is a valid
 * catalog); a backend may name any of `drivers`.
 */
export function checkCatalogDocument(
  doc: unknown,
  drivers: CatalogDrivers,
  readJson: ReadJson = noFiles,
  findFile: FindFile = noFindFile,
): { models: ModelDef[]; problems: string[] } {
  const problems: string[] = [];
  const models: ModelDef[] = [];
  if (!isObject(doc))
    return { models, problems: ['catalog: must be a mapping with a `models` list'] };
  unknownKeys(doc, ['models'], (m) => problems.push(`catalog: ${m}`));
  if (!Array.isArray(doc.models) || doc.models.length === 0) {
    problems.push('catalog: `models` must be a non-empty list');
    return { models, problems };
  }
  const seen = new Set<string>();
  doc.models.forEach((raw, i) => {
    const model = checkModel(raw, i, seen, (m) => problems.push(m), {
      readJson,
      findFile,
      drivers,
    });
    if (model) models.push(model);
  });
  return { models, problems };
}
