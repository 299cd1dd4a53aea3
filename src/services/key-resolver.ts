// Resolving bearer keys to their records per request, through a short-lived cache so that a
// revocation reaches every node within the cache's lifetime (< 1 s); the node that revokes a key
// forgets it at once (ApiKeys.revoke, keys.ts). Each record carries its principal, made with it:
// the edges of /v1 and /openai/v1 hand it to the services as who acts.
import { ApiError } from '../domain/errors.ts';
import { keyPrincipal } from '../domain/principal.ts';
import type { Db } from '../db/pool.ts';
import { keyByHash } from '../db/api-keys.ts';
import { hashKey, type KeyRecord } from './keys.ts';
import { UNKNOWN_KEY_TTL_MS, UnknownKeyLimiter } from '../admission/unknown-keys.ts';

/** One key's lookup; `found` is its answer once it has answered with a key, for the synchronous cached(). */
interface CachedLookup {
  at: number;
  record: Promise<KeyRecord | null>;
  found?: KeyRecord;
  unknown?: boolean;
  /** A lookup to replace this one is under way (refresh()). */
  refreshing?: boolean;
}

/**
 * Resolves bearer keys to key records, caching each answer (found, unknown or revoked) briefly. The cache
 * is keyed by the key itself (it is in this process's memory with every request anyway), so a cached
 * request costs no hashing; concurrent requests with one expired key share one lookup.
 */
export class KeyResolver {
  private cache = new Map<string, CachedLookup>();
  private keyRe: RegExp;
  private unknownKeys = new UnknownKeyLimiter();

  constructor(
    private db: Db,
    prefix: string,
    private ttlMs = 500,
  ) {
    this.keyRe = new RegExp(`^${prefix}(?:live|test)_[1-9A-HJ-NP-Za-km-z]{32,64}$`);
  }

  /**
   * The key's record when this process looked it up within the cache's lifetime and it is valid;
   * undefined otherwise (ask authenticate()). Lets the request path skip a promise per request.
   */
  cached(header: string | undefined): KeyRecord | undefined {
    if (header === undefined || !header.startsWith('Bearer ')) return undefined;
    const key = header.slice(7);
    const hit = this.cache.get(key);
    if (!hit) return undefined;
    const now = Date.now();
    if (now - hit.at > this.ttlMs) return undefined;
    this.refresh(key, hit, now);
    return hit.found && !hit.found.revokedAt ? hit.found : undefined;
  }

  /**
   * A key in use past half its cache lifetime is looked up again in the background, its answer
   * still served meanwhile: a client calling steadily never waits for the lookup, and no answer
   * served is older than the lifetime (the new one replaces it only once it has answered; a failed
   * one leaves it to expire). So a revocation still reaches this process within the lifetime.
   */
  private refresh(key: string, hit: CachedLookup, now: number): void {
    const age = now - hit.at;
    if (hit.refreshing || !hit.found || age <= this.ttlMs / 2 || age > this.ttlMs) return;
    hit.refreshing = true;
    const entry: CachedLookup = { at: now, record: this.lookup(hashKey(key)) };
    entry.record.then(
      (r) => {
        if (r) entry.found = r;
        else entry.unknown = true;
        if (this.cache.get(key) === hit) this.cache.set(key, entry);
      },
      () => {
        hit.refreshing = false;
      },
    );
  }

  /** Drops the cached answers about a key (by its id) that was just revoked: the next request asks. */
  forget(keyId: string): void {
    for (const [key, entry] of this.cache) if (entry.found?.id === keyId) this.cache.delete(key);
  }

  /** `address`: the client's, for the limit on unknown keys (unknown-keys.ts). */
  async authenticate(header: string | undefined, address?: string): Promise<KeyRecord> {
    if (header === undefined || header === '')
      throw new ApiError('API_KEY_MISSING', 'Send your API key as "Authorization: Bearer <key>".');
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m)
      throw new ApiError('API_KEY_INVALID', 'The Authorization header must be "Bearer <key>".');
    const key = m[1];
    const now = Date.now();
    let hit = this.cache.get(key);
    if (hit) this.refresh(key, hit, now);
    if (!hit || now - hit.at > (hit.unknown ? UNKNOWN_KEY_TTL_MS : this.ttlMs)) {
      if (!this.keyRe.test(key)) throw new ApiError('API_KEY_INVALID', 'The API key is not valid.');
      // A key this process has seen valid is looked up again whatever its address has been doing.
      if (!hit?.found) this.unknownKeys.check(address, now);
      const entry: CachedLookup = { at: now, record: this.lookup(hashKey(key)) };
      if (this.cache.size > 50_000) this.cache.clear();
      this.cache.set(key, entry);
      // A failed lookup (database away) is not an answer: the next request asks again.
      entry.record.then(
        (r) => {
          if (r) entry.found = r;
          else {
            entry.unknown = true;
            this.unknownKeys.note(address);
          }
        },
        () => {
          if (this.cache.get(key) === entry) this.cache.delete(key);
        },
      );
      hit = entry;
    }
    const record = await hit.record;
    if (!record) throw new ApiError('API_KEY_INVALID', 'The API key is not valid.');
    if (record.revokedAt) throw new ApiError('API_KEY_REVOKED', 'The API key has been revoked.');
    return record;
  }

  private async lookup(hash: Buffer): Promise<KeyRecord | null> {
    const r = await keyByHash(this.db, hash);
    if (!r) return null;
    const principal = keyPrincipal({
      id: r.id,
      accountId: r.account_id,
      mode: r.mode,
      dailyCapCents: r.daily_cap_cents,
    });
    return {
      principal,
      id: r.id,
      accountId: r.account_id,
      name: r.name,
      start: r.start,
      createdAt: r.created_at,
      dailyCapCents: r.daily_cap_cents,
      rateLimitPerMinute: r.rate_limit_per_minute,
      revokedAt: r.revoked_at,
      mode: r.mode,
      account: {
        liveKeys: r.live_keys,
        rateLimitPerMinute: r.max_rate_limit_per_minute ?? r.rate_limit_per_minute,
      },
    };
  }
}
