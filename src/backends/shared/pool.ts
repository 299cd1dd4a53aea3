// A pool of servers of the operator's own (Cog, ComfyUI, OpenAI-compatible): `url` or `urls` in the
// catalog, each server taking `concurrencyPerUrl` renders at once. claim.ts shares a model's
// renders among them and health.ts probes each; hosted APIs (Replicate, fal) queue renders
// themselves and have none.
import { hasUserinfo, stripUserinfo } from '../../domain/scrub.ts';
import type { Raw, Report } from '../../domain/catalog-check.ts';
import { isHttpUrl } from './catalog-checks.ts';

export interface ServerPool {
  urls: string[];
  concurrencyPerUrl: number;
}

/** The keys of a pool in a driver's block. */
export const POOL_KEYS = ['url', 'urls', 'concurrencyPerUrl'];

/** The pool of a block, one problem per bad key; undefined when an address is bad. */
export function checkPool(raw: Raw, bad: Report): ServerPool | undefined {
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

/** The pool of a checked block that holds one (a Driver's `pool`). */
export const poolOf = (b: ServerPool): ServerPool => ({
  urls: b.urls,
  concurrencyPerUrl: b.concurrencyPerUrl,
});
