// `-i name=value` arguments typed from the model's field descriptors: numbers, toggles and enums become
// JSON numbers and booleans; `@file` uploads an image for a url field or reads a text field from a file.
import fsp from 'node:fs/promises';
import type { Rendergate } from '../client.js';
import { readImageFile } from '../files.js';
import type { Field, InputValue } from '../types.js';

export class UsageError extends Error {}

const TRUE = new Set(['true', 'yes', 'on', '1']);
const FALSE = new Set(['false', 'no', 'off', '0']);

export function typedValue(field: Field, raw: string): InputValue {
  const what = `-i ${field.name}`;
  switch (field.type) {
    case 'number': {
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isFinite(n))
        throw new UsageError(`${what}: ${JSON.stringify(raw)} is not a number`);
      return n;
    }
    case 'toggle':
      if (TRUE.has(raw.toLowerCase())) return true;
      if (FALSE.has(raw.toLowerCase())) return false;
      throw new UsageError(`${what}: give true or false`);
    case 'enum': {
      const match = (field.values ?? []).find((v) => String(v) === raw);
      if (match === undefined)
        throw new UsageError(`${what}: one of ${(field.values ?? []).join(', ')}`);
      return match;
    }
    default:
      return raw;
  }
}

/** Parses every `-i name=value` against the model's fields; `@path` values are uploaded or read. */
export async function parseInputs(
  rg: Rendergate,
  fields: Field[],
  args: string[],
): Promise<Record<string, InputValue>> {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const out: Record<string, InputValue> = {};
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`-i ${arg}: write name=value`);
    const name = arg.slice(0, eq);
    const raw = arg.slice(eq + 1);
    const field = byName.get(name);
    if (!field)
      throw new UsageError(
        `-i ${name}: the model has no such input (it takes ${fields.map((f) => f.name).join(', ')})`,
      );
    if (name in out) throw new UsageError(`-i ${name}: given twice`);
    if (raw.startsWith('@') && field.type === 'url') {
      const { bytes, contentType } = await readImageFile(raw.slice(1)).catch((e: Error) => {
        throw new UsageError(`-i ${name}: ${e.message}`);
      });
      out[name] = (await rg.uploads.create(bytes, contentType)).url;
    } else if (raw.startsWith('@') && field.type === 'text') {
      out[name] = await fsp.readFile(raw.slice(1), 'utf8').catch((e: Error) => {
        throw new UsageError(`-i ${name}: ${e.message}`);
      });
    } else {
      out[name] = typedValue(field, raw);
    }
  }
  return out;
}
