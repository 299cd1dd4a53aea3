// Structural check of a model's `backend` (docs/backends.md), one problem per bad
// key, so `rendergate catalog check` lists them all. The CEL in `inputs`, `bindings`, `messages` and
// `params` is compiled by catalog-load.ts; secrets (`${env:NAME}`) are only checked for form here and
// read from the environment at start (src/backends/secrets.ts).
import type { BackendBinding, CelMap, ServerPool } from './catalog.ts';
import { hasUserinfo, stripUserinfo } from './scrub.ts';
import { isObject, isText, type Raw, type Report } from './catalog-check.ts';

const RENDERER = /^[a-z0-9][a-z0-9_-]*$/;
const SECRET = /\$\{env:([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const POOL_KEYS = ['url', 'urls', 'concurrencyPerUrl'];
const KEYS: Record<BackendBinding['driver'], string[]> = {
  local: ['renderer'],
  cog: [...POOL_KEYS, 'inputs'],
  comfyui: [...POOL_KEYS, 'workflow', 'bindings', 'outputNode'],
  openai: [...POOL_KEYS, 'model', 'apiKey', 'messages', 'params'],
  replicate: ['model', 'version', 'apiToken', 'baseUrl', 'inputs'],
  fal: ['app', 'apiKey', 'baseUrl', 'inputs'],
};
export const DEFAULT_BASE_URL = {
  replicate: 'https://api.replicate.com',
  fal: 'https://queue.fal.run',
} as const;

function isHttpUrl(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Every `${env:NAME}` a value refers to. */
export function secretNames(value: string): string[] {
  return [...value.matchAll(SECRET)].map((m) => m[1]);
}

function checkSecretForm(
  raw: Raw,
  key: string,
  bad: Report,
  required: boolean,
): string | undefined {
  const v = raw[key];
  if (v === undefined && !required) return undefined;
  if (!isText(v))
    return void bad(`backend.${key} must be a string (write a secret as "\${env:NAME}")`);
  for (const name of secretNames(v))
    if (!ENV_NAME.test(name))
      bad(`backend.${key}: "\${env:${name}}" does not name an environment variable`);
  return v;
}

function checkPool(raw: Raw, bad: Report): ServerPool | undefined {
  let urls: unknown[] = [];
  if (raw.url !== undefined && raw.urls !== undefined) bad('backend takes url or urls, not both');
  if (raw.urls !== undefined) {
    if (!Array.isArray(raw.urls) || raw.urls.length === 0)
      return void bad('backend.urls must be a non-empty list of http(s) addresses');
    urls = raw.urls;
  } else if (raw.url !== undefined) urls = [raw.url];
  else return void bad('backend.url (or urls) is required: the address of the model server');
  // Credentials never go in a server's address: fetch refuses them, and an address is shown (in
  // /readyz, /metrics and logs), so it must hold nothing secret. The address is named without them.
  const good = urls.filter((u) => {
    if (!isHttpUrl(u))
      return bad(
        `backend url ${JSON.stringify(stripUserinfo(String(u)))} is not an http(s) address`,
      );
    if (hasUserinfo(u))
      return bad(
        `backend url ${JSON.stringify(stripUserinfo(u))} must not carry a user name or password`,
      );
    return true;
  }) as string[];
  const trimmed = good.map((u) => u.replace(/\/+$/, ''));
  if (new Set(trimmed).size !== trimmed.length) bad('backend.urls lists a server twice');
  const per = raw.concurrencyPerUrl ?? 1;
  if (!Number.isSafeInteger(per) || (per as number) < 1)
    bad('backend.concurrencyPerUrl must be a positive integer');
  return good.length === urls.length
    ? { urls: trimmed, concurrencyPerUrl: per as number }
    : undefined;
}

function checkCelMap(
  raw: unknown,
  key: string,
  bad: Report,
  allowEmpty = false,
): CelMap | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw) || (!allowEmpty && Object.keys(raw).length === 0))
    return void bad(`backend.${key} must map names to CEL expressions`);
  for (const [k, v] of Object.entries(raw))
    if (!isText(v))
      bad(`backend.${key}.${k} must be a CEL expression (a string; quote a literal as "'text'")`);
  return raw as CelMap;
}

/** Checks one backend; `readJson` loads a file named relative to the catalog (ComfyUI workflows). */
export function checkBackend(
  raw: unknown,
  bad: Report,
  readJson: (path: string) => unknown,
): BackendBinding | undefined {
  if (!isObject(raw) || typeof raw.driver !== 'string' || !(raw.driver in KEYS)) {
    bad(`backend.driver must be one of ${Object.keys(KEYS).join(', ')}`);
    return undefined;
  }
  const driver = raw.driver as BackendBinding['driver'];
  for (const k of Object.keys(raw))
    if (k !== 'driver' && !KEYS[driver].includes(k))
      bad(`unknown backend key "${k}" for driver ${driver}`);
  let n = 0;
  const count: Report = (m) => {
    n++;
    bad(m);
  };
  const result = checkDriver(driver, raw, count, readJson);
  return n === 0 ? result : undefined;
}

function checkDriver(
  driver: BackendBinding['driver'],
  raw: Raw,
  bad: Report,
  readJson: (path: string) => unknown,
): BackendBinding | undefined {
  switch (driver) {
    case 'local':
      if (typeof raw.renderer === 'string' && RENDERER.test(raw.renderer))
        return { driver, renderer: raw.renderer };
      return void bad(
        'backend.renderer must be a renderer name (lowercase letters, digits, - and _)',
      );
    case 'cog': {
      const pool = checkPool(raw, bad);
      const inputs = checkCelMap(raw.inputs, 'inputs', bad);
      return pool && { driver, ...pool, ...(inputs ? { inputs } : {}) };
    }
    case 'comfyui': {
      const pool = checkPool(raw, bad);
      const bindings = checkCelMap(raw.bindings, 'bindings', bad, true) ?? {};
      if (!isText(raw.workflow))
        return void bad(
          'backend.workflow must name an API-format workflow file (relative to the catalog)',
        );
      let graph: unknown;
      try {
        graph = readJson(raw.workflow);
      } catch (e) {
        return void bad(`backend.workflow ${raw.workflow}: ${(e as Error).message}`);
      }
      if (
        !isObject(graph) ||
        !Object.values(graph).every(
          (node) => isObject(node) && typeof node.class_type === 'string' && isObject(node.inputs),
        )
      ) {
        return void bad(
          `backend.workflow ${raw.workflow} is not an API-format workflow ({ "<node id>": { class_type, inputs } }); export it with "Save (API)"`,
        );
      }
      for (const path of Object.keys(bindings)) {
        const [node, inputs, name, ...rest] = path.split('.');
        if (inputs !== 'inputs' || !name || rest.length > 0)
          bad(`backend.bindings "${path}" must be "<node id>.inputs.<input name>"`);
        else if (!Object.hasOwn(graph, node))
          bad(`backend.bindings "${path}": the workflow has no node "${node}"`);
      }
      if (
        raw.outputNode !== undefined &&
        (typeof raw.outputNode !== 'string' || !Object.hasOwn(graph, raw.outputNode))
      ) {
        bad(
          `backend.outputNode ${JSON.stringify(raw.outputNode)} is not a node id of the workflow`,
        );
      }
      return (
        pool && {
          driver,
          ...pool,
          workflow: raw.workflow,
          graph,
          bindings,
          ...(typeof raw.outputNode === 'string' ? { outputNode: raw.outputNode } : {}),
        }
      );
    }
    case 'openai': {
      const pool = checkPool(raw, bad);
      if (!isText(raw.model)) bad('backend.model must name the served model');
      const apiKey = checkSecretForm(raw, 'apiKey', bad, false);
      const messages = raw.messages;
      if (
        !Array.isArray(messages) ||
        messages.length === 0 ||
        !messages.every(
          (m) => isObject(m) && isText(m.role) && isText(m.content) && Object.keys(m).length === 2,
        )
      ) {
        return void bad(
          'backend.messages must be a non-empty list of { role, content } (content a CEL expression)',
        );
      }
      const params = checkCelMap(raw.params, 'params', bad);
      return (
        pool && {
          driver,
          ...pool,
          model: raw.model as string,
          ...(apiKey ? { apiKey } : {}),
          messages: messages as { role: string; content: string }[],
          ...(params ? { params } : {}),
        }
      );
    }
    case 'replicate': {
      if (!isText(raw.model) || !/^[^/\s]+\/[^/\s]+$/.test(raw.model))
        bad('backend.model must be owner/name');
      if (raw.version !== undefined && !isText(raw.version))
        bad('backend.version must be a version id');
      const apiToken = checkSecretForm(raw, 'apiToken', bad, true);
      const baseUrl = raw.baseUrl ?? DEFAULT_BASE_URL.replicate;
      if (!isHttpUrl(baseUrl) || hasUserinfo(baseUrl))
        bad('backend.baseUrl must be an http(s) address without credentials');
      const inputs = checkCelMap(raw.inputs, 'inputs', bad);
      return {
        driver,
        model: raw.model as string,
        ...(raw.version ? { version: raw.version as string } : {}),
        apiToken: apiToken ?? '',
        baseUrl: (typeof baseUrl === 'string' ? baseUrl : '').replace(/\/+$/, ''),
        ...(inputs ? { inputs } : {}),
      };
    }
    case 'fal': {
      if (!isText(raw.app) || !/^[^/\s]+\/[^\s]+$/.test(raw.app))
        bad('backend.app must be owner/app (e.g. fal-ai/some-model)');
      const apiKey = checkSecretForm(raw, 'apiKey', bad, true);
      const baseUrl = raw.baseUrl ?? DEFAULT_BASE_URL.fal;
      if (!isHttpUrl(baseUrl) || hasUserinfo(baseUrl))
        bad('backend.baseUrl must be an http(s) address without credentials');
      const inputs = checkCelMap(raw.inputs, 'inputs', bad);
      return {
        driver,
        app: raw.app as string,
        apiKey: apiKey ?? '',
        baseUrl: (typeof baseUrl === 'string' ? baseUrl : '').replace(/\/+$/, ''),
        ...(inputs ? { inputs } : {}),
      };
    }
  }
}
