// The checks the drivers' catalog blocks share (each driver's catalog.ts): addresses, secrets
// written `${env:NAME}`, maps of CEL expressions, a hosted API's base address. Each reports one
// problem per bad key, in the words `rendergate catalog check` prints.
import { hasUserinfo } from '../../domain/scrub.ts';
import type { CelMap } from '../../domain/catalog.ts';
import { isObject, isText, type Raw, type Report } from '../../domain/catalog-check.ts';
import { secretNames } from '../secrets.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isHttpUrl(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A key holding a secret: a string whose every `${env:…}` names an environment variable. */
export function checkSecretForm(
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

/** A map of names to CEL expressions (compiled at load by domain/catalog-backend-cel.ts). */
export function checkCelMap(
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

/** A hosted API's `baseUrl`, `fallback` when unset; without a trailing slash. */
export function checkBaseUrl(raw: Raw, bad: Report, fallback: string): string {
  const baseUrl = raw.baseUrl ?? fallback;
  if (!isHttpUrl(baseUrl) || hasUserinfo(baseUrl))
    bad('backend.baseUrl must be an http(s) address without credentials');
  return (typeof baseUrl === 'string' ? baseUrl : '').replace(/\/+$/, '');
}
