// What the fetch of an input image refuses before it connects, for a render that fetches nothing: a
// test render (docs/api.md "Test keys") checks here the addresses its model's renderer would fetch
// (ModelBackend.inputUrls), so it is refused exactly where a live render is, with the same code and
// message. The steps are the live fetch's own (video-common.ts fetchInputImage, fetch-image.ts):
// - an upload address of this service is read from storage, never fetched, so never checked;
// - any other is parsed by parseInputUrl (http or https, no credentials);
// - its host's addresses (itself when it is an IP address, else what DNS answers) are judged by
//   vetAddresses under imagePolicy: the address guard, lifted by RENDERGATE_ALLOW_PRIVATE_URLS=1.
// Only refusals are reproduced. What only a fetch finds (no such host, an HTTP error, not an image,
// too large, too slow) is not: a lookup that fails or takes longer than `lookupMs` refuses nothing.
// Lookups are kept per host for `cacheMs` and shared while in flight, so a burst of test renders of
// one address costs one lookup, and the verdict is usually at hand when the next create is made
// (`now`): that render is then recorded final by its create (migrations/019).
import { RenderError } from '../types.ts';
import type { AddressPolicy } from '../../net/address-guard.ts';
import {
  bareHost,
  hostAddresses,
  literalAddress,
  vetAddresses,
  type ResolvedAddress,
  type Resolver,
} from '../shared/guarded-request.ts';
import { parseInputUrl } from './guarded-get.ts';
import { imagePolicy } from './fetch-image.ts';

export interface InputCheckOptions {
  /** RENDERGATE_ALLOW_PRIVATE_URLS=1: the live fetch refuses no address, and neither does this. */
  allowPrivate: boolean;
  /** `{PUBLIC_URL}/v1/uploads/`: addresses under it are uploads, read from storage. */
  uploadPrefix: string;
  /** Test seams, as the fetcher's. */
  policy?: AddressPolicy;
  resolve?: Resolver;
  /** How long a host's lookup is kept (default 10 s). */
  cacheMs?: number;
  /** How long a lookup may take before it refuses nothing (default 5 s). */
  lookupMs?: number;
  /** Hosts kept at most; the least recently looked up go first (default 1,000). */
  maxHosts?: number;
}

/** A host's addresses; null when its lookup failed (nothing to refuse). */
type Lookup = ResolvedAddress[] | null;

/** One address: passes, refused (the live fetch's error), or its host still to be looked up. */
type Verdict = { pass: true } | { refused: RenderError } | { lookup: URL };

export class InputAddressCheck {
  private hosts = new Map<string, { until: number; addresses: Lookup }>();
  private pending = new Map<string, Promise<Lookup>>();
  private policy: AddressPolicy;

  constructor(private o: InputCheckOptions) {
    this.policy = imagePolicy(o);
  }

  /**
   * The refusal of the first refused address of `urls` (in the renderer's order), null when none is
   * refused, undefined when that is not known without a lookup (check() then tells).
   */
  now(urls: readonly string[]): RenderError | null | undefined {
    for (const raw of urls) {
      const v = this.verdict(raw);
      if ('refused' in v) return v.refused;
      if ('lookup' in v) return undefined;
    }
    return null;
  }

  /** As now(), looking hosts up where it must. */
  async check(urls: readonly string[]): Promise<RenderError | null> {
    for (const raw of urls) {
      let v = this.verdict(raw);
      if ('lookup' in v) v = this.judge(v.lookup, await this.lookup(v.lookup));
      if ('refused' in v) return v.refused;
    }
    return null;
  }

  private verdict(raw: string): Verdict {
    if (raw.startsWith(this.o.uploadPrefix)) return { pass: true };
    let url: URL;
    try {
      url = parseInputUrl(raw);
    } catch (e) {
      if (e instanceof RenderError) return { refused: e };
      throw e;
    }
    // The lifted policy passes every address: nothing is left to look up.
    if (this.o.allowPrivate) return { pass: true };
    const literal = literalAddress(url);
    if (literal) return this.judge(url, [literal]);
    const known = this.hosts.get(bareHost(url));
    if (known && known.until > Date.now()) return this.judge(url, known.addresses);
    return { lookup: url };
  }

  private judge(url: URL, addresses: Lookup): Verdict {
    if (addresses === null) return { pass: true };
    try {
      vetAddresses(url, addresses, this.policy);
      return { pass: true };
    } catch (e) {
      if (e instanceof RenderError) return { refused: e };
      throw e;
    }
  }

  /** The host's addresses, one lookup at a time per host; kept for cacheMs. */
  private lookup(url: URL): Promise<Lookup> {
    const host = bareHost(url);
    let found = this.pending.get(host);
    if (!found) {
      const signal = AbortSignal.timeout(this.o.lookupMs ?? 5_000);
      found = hostAddresses(url, { signal, resolve: this.o.resolve })
        .catch((): Lookup => null)
        .then((addresses) => {
          this.remember(host, addresses);
          this.pending.delete(host);
          return addresses;
        });
      this.pending.set(host, found);
    }
    return found;
  }

  private remember(host: string, addresses: Lookup) {
    this.hosts.delete(host);
    this.hosts.set(host, { until: Date.now() + (this.o.cacheMs ?? 10_000), addresses });
    const max = this.o.maxHosts ?? 1_000;
    for (const k of this.hosts.keys()) {
      if (this.hosts.size <= max) break;
      this.hosts.delete(k);
    }
  }
}
