// A model's `examples` in the catalog: inputs a person can try, each with the output they make, shown
// on the model's page in the studio. An image input or a file output is a file beside the catalog
// (a path relative to it, never outside it), read and checked at load, so a page never links a file
// that is not there. Every other input value goes through the very checker requests go through.
import fs from 'node:fs';
import path from 'node:path';
import type { FieldDef, InputValue, ModelExample, ModelOutput } from './catalog.ts';
import { compileFieldCheck } from './inputs.ts';
import { isObject, unknownKeys, type Report } from './catalog-check.ts';

/** Finds a file named relative to the catalog: its absolute path, or a reason it cannot be used. */
export type FindFile = (relative: string) => { file: string } | { problem: string };

export const MAX_EXAMPLES = 10;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
};
const FILE_TYPES: Record<string, string> = {
  ...IMAGE_TYPES,
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.gif': 'image/gif',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
};

const isUrl = (v: string) => /^https?:\/\//i.test(v);

/** Files under `dir` only, of at most 2 MiB. */
export function filesUnder(dir: string): FindFile {
  const root = path.resolve(dir);
  return (relative) => {
    const file = path.resolve(root, relative);
    if (path.isAbsolute(relative) || !file.startsWith(root + path.sep))
      return { problem: `"${relative}" must be a path inside the catalog's folder` };
    let size: number;
    try {
      const st = fs.statSync(file);
      if (!st.isFile()) return { problem: `"${relative}" is not a file` };
      size = st.size;
    } catch {
      return { problem: `"${relative}" does not exist (relative to the catalog file)` };
    }
    if (size > MAX_FILE_BYTES) return { problem: `"${relative}" is larger than 2 MiB` };
    return { file };
  };
}

export const noFindFile: FindFile = (relative) => ({
  problem: `"${relative}": example files cannot be read here`,
});

function checkInputs(
  raw: unknown,
  fields: FieldDef[],
  findFile: FindFile,
  bad: Report,
): Pick<ModelExample, 'inputs' | 'files'> | undefined {
  if (!isObject(raw)) return void bad('inputs must be a mapping of field names to values');
  const inputs: Record<string, InputValue> = {};
  const files: ModelExample['files'] = {};
  let ok = true;
  const fail = (m: string) => {
    ok = false;
    bad(m);
  };
  for (const [name, value] of Object.entries(raw)) {
    const f = fields.find((g) => g.name === name);
    if (!f) {
      fail(`inputs: "${name}" is not a field of the model`);
      continue;
    }
    if (f.type === 'url' && f.media === 'image' && typeof value === 'string' && !isUrl(value)) {
      const type = IMAGE_TYPES[path.extname(value).toLowerCase()];
      const found = findFile(value);
      if (!type) fail(`inputs.${name}: "${value}" must be a .png, .jpg or .webp image`);
      else if ('problem' in found) fail(`inputs.${name}: ${found.problem}`);
      else {
        files[name] = { file: found.file, contentType: type };
        inputs[name] = value;
      }
      continue;
    }
    const why = compileFieldCheck(f)(value);
    if (why !== undefined) fail(`inputs.${name}: ${JSON.stringify(value)} ${why}`);
    else inputs[name] = value as InputValue;
  }
  for (const f of fields)
    if (f.required && !(f.name in raw)) fail(`inputs: the required field "${f.name}" is missing`);
  return ok ? { inputs, files } : undefined;
}

function checkOutput(
  raw: unknown,
  output: ModelOutput,
  findFile: FindFile,
  bad: Report,
): ModelExample['output'] | undefined {
  if (output.type === 'text') {
    if (
      isObject(raw) &&
      typeof raw.text === 'string' &&
      raw.text.trim() !== '' &&
      Object.keys(raw).length === 1
    )
      return { text: raw.text };
    return void bad('output must be {text: "…"}: the model answers with text');
  }
  if (typeof raw !== 'string')
    return void bad(`output must be the path of a ${output.contentType} file`);
  const type = FILE_TYPES[path.extname(raw).toLowerCase()];
  if (type !== output.contentType)
    return void bad(
      `output "${raw}" must be a ${output.contentType} file, as the model's output is`,
    );
  const found = findFile(raw);
  if ('problem' in found) return void bad(`output: ${found.problem}`);
  return { file: found.file, contentType: type };
}

/** The model's examples when sound; each problem reported with its example's number. */
export function checkExamples(
  raw: unknown,
  fields: FieldDef[],
  output: ModelOutput,
  findFile: FindFile,
  report: Report,
): ModelExample[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.length > MAX_EXAMPLES) {
    report(`examples must be a list of at most ${MAX_EXAMPLES}`);
    return [];
  }
  const out: ModelExample[] = [];
  raw.forEach((e, i) => {
    let problems = 0;
    const bad: Report = (m) => {
      problems++;
      report(`example #${i + 1}: ${m}`);
    };
    if (!isObject(e)) return bad('must be a mapping with inputs and output');
    unknownKeys(e, ['title', 'inputs', 'output'], bad);
    if (
      e.title !== undefined &&
      (typeof e.title !== 'string' || e.title.trim() === '' || e.title.length > 200)
    )
      bad('title must be a string of 1 to 200 characters');
    const inputs = checkInputs(e.inputs, fields, findFile, bad);
    const made = checkOutput(e.output, output, findFile, bad);
    if (problems === 0 && inputs && made)
      out.push({
        ...(typeof e.title === 'string' ? { title: e.title } : {}),
        ...inputs,
        output: made,
      });
  });
  return out;
}
