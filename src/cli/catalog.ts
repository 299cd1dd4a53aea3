// Operator tools for catalogs: `rendergate catalog check FILE` validates a catalog as the server would
// at start (every problem, and the secrets it needs that are not set), and `rendergate catalog import
// cog URL` turns a running Cog container's input schema (`GET /openapi.json`, `components.schemas.Input`,
// fields in `x-order`) into a catalog entry to price and paste.
import { UsageError } from './cli-error.ts';
import { stringify } from 'yaml';
import { CatalogError } from '../domain/catalog-load.ts';
import { buildCatalog, loadCatalog } from '../backends/catalog.ts';
import { secretNames } from '../backends/secrets.ts';
import type { BackendBinding } from '../domain/catalog.ts';

type Schema = Record<string, unknown>;
type Out = (text: string) => void;

/** `catalog check FILE`: the problems, one a line, and exit status 1; or a summary and 0. */
export function checkCatalogFile(file: string, env: NodeJS.ProcessEnv, out: Out): number {
  let problems: string[] = [];
  let ids: string[] = [];
  try {
    const catalog = loadCatalog(file);
    ids = catalog.models.map((m) => m.id);
    for (const m of catalog.models) {
      for (const name of secretsOf(m.backend))
        if (!env[name])
          problems.push(`model "${m.id}": backend needs \${env:${name}}, which is not set here`);
    }
  } catch (e) {
    if (!(e instanceof CatalogError)) throw e;
    problems = e.problems;
  }
  if (problems.length > 0) {
    out(
      `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    return 1;
  }
  out(`${file}: ok, ${ids.length} model${ids.length === 1 ? '' : 's'} (${ids.join(', ')})\n`);
  return 0;
}

/** The secrets a block names, whatever its driver: in its strings and lists of them (`urls`). */
function secretsOf(b: BackendBinding): string[] {
  const values = Object.values(b as object as Record<string, unknown>).flatMap((v) =>
    typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((u) => typeof u === 'string') : [],
  );
  return values.flatMap(secretNames);
}

const resolveRef = (root: Schema, s: Schema): Schema => {
  const ref = (s.$ref ?? (Array.isArray(s.allOf) && (s.allOf[0] as Schema)?.$ref)) as
    string | undefined;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return s;
  let target: unknown = root;
  for (const part of ref.slice(2).split('/')) target = (target as Schema)?.[part];
  return { ...(target as Schema), ...s };
};

/** One catalog field from a property of Cog's Input schema (pydantic's JSON Schema). */
function fieldOf(
  root: Schema,
  name: string,
  raw: Schema,
  required: boolean,
): Record<string, unknown> {
  const s = resolveRef(root, raw);
  const f: Record<string, unknown> = { name, type: 'text', required };
  if (typeof s.description === 'string' && s.description.trim())
    f.description = s.description.trim();
  if (Array.isArray(s.enum)) {
    f.type = 'enum';
    f.values = s.enum;
  } else if (s.type === 'integer' || s.type === 'number') {
    f.type = 'number';
    if (s.type === 'integer') f.integer = true;
    if (typeof s.minimum === 'number') f.minimum = s.minimum;
    if (typeof s.maximum === 'number') f.maximum = s.maximum;
  } else if (s.type === 'boolean') {
    f.type = 'toggle';
  } else if (s.format === 'uri') {
    f.type = 'url';
    f.media = 'image'; // Cog `Path` inputs: files the container fetches; check that this one is an image
  } else if (typeof s.maxLength === 'number') {
    f.maxLength = s.maxLength;
  }
  // A required field, and an address, take no default in a catalog.
  if (!required && s.default !== undefined && s.default !== null && f.type !== 'url')
    f.default = s.default;
  return f;
}

/** `catalog import cog URL`: the catalog entry (YAML) for the Cog model served at `url`. */
export async function importCog(url: string, id: string, out: Out): Promise<number> {
  const base = url.replace(/\/+$/, '');
  const res = await fetch(`${base}/openapi.json`, { signal: AbortSignal.timeout(15_000) });
  if (res.status === 503)
    throw new Error(
      `${base} is still setting up (503); try again once GET /health-check says READY`,
    );
  if (!res.ok) throw new Error(`GET ${base}/openapi.json answered ${res.status}`);
  const root = (await res.json()) as Schema;
  const schemas = ((root.components as Schema)?.schemas ?? {}) as Schema;
  const input = schemas.Input as Schema | undefined;
  if (!input || typeof input.properties !== 'object')
    throw new Error(`${base}/openapi.json has no components.schemas.Input: is it a Cog container?`);
  const props = Object.entries(input.properties as Record<string, Schema>).sort(
    ([, a], [, b]) => Number(a['x-order'] ?? 1e9) - Number(b['x-order'] ?? 1e9),
  );
  const required = new Set(Array.isArray(input.required) ? (input.required as string[]) : []);
  const fields = props.map(([name, p]) => fieldOf(root, name, p, required.has(name)));
  const outSchema = resolveRef(root, (schemas.Output ?? {}) as Schema);
  const fileOutput =
    outSchema.format === 'uri' ||
    (outSchema.type === 'array' && (outSchema.items as Schema)?.format === 'uri');
  const model = {
    id,
    name:
      typeof (root.info as Schema)?.title === 'string'
        ? ((root.info as Schema).title as string)
        : id,
    kind: fileOutput ? 'video' : 'text',
    description: 'Describe the model for your clients.',
    output: fileOutput ? { type: 'file', contentType: 'video/mp4' } : { type: 'text' },
    fields,
    price: '100',
    backend: { driver: 'cog', url: base },
    timeLimitSeconds: 300,
    maxAttempts: 3,
  };
  let note = '';
  try {
    buildCatalog({ models: [model] }, 'import');
  } catch (e) {
    if (!(e instanceof CatalogError)) throw e;
    note = `# The entry needs edits before it loads:\n${e.problems.map((p) => `#   - ${p}`).join('\n')}\n`;
  }
  out(
    `# Imported from ${base}/openapi.json. Set the price (CEL over the inputs, in cents), the kind, the\n` +
      `# output's contentType, the description and the limits; check each url field takes an image.\n${note}` +
      stringify([model], { lineWidth: 120 }),
  );
  return 0;
}

/** Dispatches `rendergate catalog <sub> …`; the exit status. */
export async function catalogCommand(
  sub: string | undefined,
  args: string[],
  flags: Map<string, string>,
  out: Out = (t) => process.stdout.write(t),
): Promise<number> {
  if (sub === 'check' && args[0]) return checkCatalogFile(args[0], process.env, out);
  if (sub === 'import' && args[0] === 'cog' && args[1])
    return importCog(args[1], flags.get('id') ?? 'vendor/model-name', out);
  throw new UsageError("catalog import takes the word cog, then the container's URL");
}
