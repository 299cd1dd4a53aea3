// The check a test render makes of its input addresses in place of a fetch (backends/local/
// input-check.ts): the live fetch's refusals with the same code and message, upload addresses left to
// storage, one lookup per host however many ask at once, kept for a while, and a lookup that fails or
// hangs refusing nothing. DNS is stood in for by the fetcher's own seam.
import { describe, expect, it } from 'vitest';
import { InputAddressCheck } from '../../../src/backends/local/input-check.ts';
import { fetchImage } from '../../../src/backends/local/fetch-image.ts';
import type { Resolver } from '../../../src/backends/shared/guarded-request.ts';
import { RenderError } from '../../../src/backends/types.ts';

const UPLOADS = 'http://127.0.0.1:8080/v1/uploads/';

/** A resolver answering from `table`, counting its lookups; `hang` names hosts it never answers. */
function dns(table: Record<string, string[]>, hang: string[] = []) {
  const calls: string[] = [];
  const resolve: Resolver = (host) => {
    calls.push(host);
    if (hang.includes(host)) return new Promise(() => undefined);
    const found = table[host];
    if (!found) return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    return Promise.resolve(found.map((address) => ({ address, family: 4 as const })));
  };
  return { resolve, calls };
}

const check = (
  resolve: Resolver,
  extra: Partial<ConstructorParameters<typeof InputAddressCheck>[0]> = {},
) => new InputAddressCheck({ allowPrivate: false, uploadPrefix: UPLOADS, resolve, ...extra });

/** What the live fetch throws for `url` (before it would connect). */
async function liveRefusal(url: string, resolve: Resolver): Promise<RenderError> {
  try {
    await fetchImage(url, { workDir: '/tmp', resolve, timeoutMs: 2_000 });
  } catch (e) {
    return e as RenderError;
  }
  throw new Error(`${url} was fetched`);
}

describe('InputAddressCheck', () => {
  it('refuses with the live fetch’s own code and message, without fetching', async () => {
    const { resolve } = dns({
      'inside.example': ['10.0.0.7'],
      'mixed.example': ['8.8.8.8', '127.0.0.1'],
    });
    const c = check(resolve);
    for (const url of [
      'http://127.0.0.1/a.png',
      'http://[fe80::1]/a.png',
      'http://inside.example/a.png',
      'http://mixed.example/a.png',
      'ftp://example.com/a.png',
    ]) {
      const live = await liveRefusal(url, resolve);
      const mine = await c.check([url]);
      expect(mine, url).toBeInstanceOf(RenderError);
      expect([mine!.code, mine!.message, mine!.retryable], url).toEqual([
        live.code,
        live.message,
        live.retryable,
      ]);
    }
  });

  it('passes global addresses and upload addresses; names the first refused of several', async () => {
    const { resolve, calls } = dns({ 'cdn.example': ['8.8.4.4'] });
    const c = check(resolve);
    expect(await c.check(['http://cdn.example/a.png', `${UPLOADS}upl_1`])).toBeNull();
    expect(c.now([`${UPLOADS}upl_2`, 'http://1.1.1.1/x.png'])).toBeNull(); // no lookup needed
    const first = await c.check(['http://8.8.8.8/a', 'http://10.0.0.1/b', 'http://127.0.0.1/c']);
    expect(first?.message).toBe(
      'http://10.0.0.1/b resolves to a private address, which renders may not fetch.',
    );
    expect(calls).toEqual(['cdn.example']);
  });

  it('knows a verdict at once when it needs no lookup or the host was looked up lately', async () => {
    const { resolve, calls } = dns({ 'cdn.example': ['8.8.4.4'], 'lan.example': ['192.168.1.9'] });
    const c = check(resolve, { cacheMs: 60_000 });
    expect(c.now(['http://127.0.0.1/a'])?.code).toBe('INPUT_URL_REFUSED');
    expect(c.now(['http://cdn.example/a'])).toBeUndefined();
    expect(c.now(['http://8.8.8.8/a', 'http://lan.example/a'])).toBeUndefined();
    await c.check(['http://cdn.example/a', 'http://lan.example/a']);
    expect(c.now(['http://cdn.example/b'])).toBeNull();
    expect(c.now(['http://lan.example/b'])?.message).toMatch(/^http:\/\/lan\.example\/b resolves/);
    expect(calls).toEqual(['cdn.example', 'lan.example']);
  });

  it('looks a host up once for many at once, and again once it is kept no longer', async () => {
    const { resolve, calls } = dns({ 'cdn.example': ['8.8.4.4'] });
    const c = check(resolve, { cacheMs: 1 });
    const all = await Promise.all(
      Array.from({ length: 50 }, (_, i) => c.check([`http://cdn.example/${i}.png`])),
    );
    expect(all.every((r) => r === null)).toBe(true);
    expect(calls).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 5));
    expect(c.now(['http://cdn.example/a.png'])).toBeUndefined();
    await c.check(['http://cdn.example/a.png']);
    expect(calls).toHaveLength(2);
  });

  it('refuses nothing for a host that does not resolve or does not answer in time', async () => {
    const { resolve } = dns({}, ['slow.example']);
    const c = check(resolve, { lookupMs: 50 });
    expect(await c.check(['http://nowhere.example/a.png'])).toBeNull();
    const t0 = Date.now();
    expect(await c.check(['http://slow.example/a.png'])).toBeNull();
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('with RENDERGATE_ALLOW_PRIVATE_URLS=1 refuses only what the fetch still refuses, looking nothing up', async () => {
    const { resolve, calls } = dns({ 'lan.example': ['192.168.1.9'] });
    const c = check(resolve, { allowPrivate: true });
    expect(c.now(['http://127.0.0.1/a', 'http://lan.example/b'])).toBeNull();
    expect((await c.check(['ftp://x.example/a']))?.code).toBe('INPUT_URL_REFUSED');
    expect(calls).toEqual([]);
  });
});
