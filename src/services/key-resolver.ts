// Resolving bearer keys to their records per request, through a cache kept correct two ways:
//   - While its LISTEN connection is up (an API process: listen()), every statement that changes what
//     a lookup reads notifies KEYS_CHANNEL at its commit (the trigger of src/db/sql/keys_changed.sql),
//     from any process, and each process drops every key it keeps: a revocation elsewhere reaches it
//     about a millisecond after its commit, and a key in steady use is kept (up to LISTENED_TTL_MS)
//     without asking the database again, so its requests never wait on a lookup.
//   - Without it (not started, or down: notifications sent meanwhile are lost, so everything is
//     dropped when it goes down and when it is back), an answer is served for the short lifetime
//     (< 1 s), so a revocation reaches every node within it, as it always did.
// The node that revokes a key forgets it at once (ApiKeys.revoke, keys.ts). A lookup under way when
// keys are dropped is not kept (it may predate the change). Each record carries its principal, made
// with it: the edges of /v1 and /openai/v1 hand it to the services as who acts.
import { ApiError } from '../domain/errors.ts';
import { keyPrincipal } from '../domain/principal.ts';
import type { Db } from '../db/pool.ts';
import { keyByHash } from '../db/api-keys.ts';
import { KEYS_CHANNEL } from '../db/channels.ts';
import { CacheListener } from '../db/listener.ts';
import { hashKey, type KeyRecord } from './keys.ts';
import { UNKNOWN_KEY_TTL_MS, UnknownKeyLimiter } from '../admission/unknown-keys.ts';

/**
 * How long a key is kept while the LISTEN connection is up: a bound on memory, not on correctness
 * (a change notifies; past half of it a key in use is looked up again in the background).
 */
export const LISTENED_TTL_MS = 60_000;

/** One key's lookup; `found` is its answer once it has answered with a key, for the synchronous cached(). */
interface CachedLookup {
  at: number;
  /** Its lifetime: LISTENED_TTL_MS when begun while the listener was up, else the short one. */
  ttl: number;
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
  private listener: CacheListener | null = null;

  constructor(
    private db: Db,
    prefix: string,
    private ttlMs = 500,
    private listenedTtlMs = LISTENED_TTL_MS,
  ) {
    this.keyRe = new RegExp(`^${prefix}(?:live|test)_[1-9A-HJ-NP-Za-km-z]{32,64}$`);
  }

  /** Keeps keys until a change notifies (API processes); stop() ends it. */
  async listen(databaseUrl: string, log: (msg: string) => void): Promise<void> {
    const clear = () => this.cache.clear();
    this.listener = new CacheListener(databaseUrl, [KEYS_CHANNEL], clear, clear, log);
    await this.listener.start();
  }

  async stop(): Promise<void> {
    this.cache.clear();
    await this.listener?.stop();
  }

  /** A lookup begun now: kept long only while changes are heard. */
  private begin(key: string, now: number): CachedLookup {
    const ttl = this.listener?.listening ? this.listenedTtlMs : this.ttlMs;
    return { at: now, ttl, record: this.lookup(hashKey(key)) };
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
    if (now - hit.at > hit.ttl) return undefined;
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
    if (hit.refreshing || !hit.found || age <= hit.ttl / 2 || age > hit.ttl) return;
    hit.refreshing = true;
    const entry = this.begin(key, now);
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
    if (!hit || now - hit.at > (hit.unknown ? UNKNOWN_KEY_TTL_MS : hit.ttl)) {
      if (!this.keyRe.test(key)) throw new ApiError('API_KEY_INVALID', 'The API key is not valid.');
      // A key this process has seen valid is looked up again whatever its address has been doing.
      if (!hit?.found) this.unknownKeys.check(address, now);
      const entry = this.begin(key, now);
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
