// API keys: created with a CSPRNG, stored only as a SHA-256 hash, looked up per request through a
// short-lived cache so that a revocation reaches every node within the cache's lifetime (< 1 s).
import crypto from 'node:crypto';
import { ApiError } from '../domain/errors.ts';
import type { Db } from '../db/pool.ts';
import { newId } from '../domain/ids.ts';
import { UNKNOWN_KEY_TTL_MS, UnknownKeyLimiter } from './unknown-keys.ts';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(bytes: Buffer): string {
  let n = BigInt('0x' + bytes.toString('hex'));
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  return out;
}

export function hashKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key).digest();
}

export interface KeyRecord {
  id: string;
  accountId: string;
  name: string;
  start: string;
  createdAt: Date;
  dailyCapCents: number | null;
  rateLimitPerMinute: number;
  revokedAt: Date | null;
}

export interface NewKey {
  name?: string;
  dailyCapCents?: number | null;
  rateLimitPerMinute?: number;
  /** `test` keys render nothing billable; a server without test keys refuses them. */
  mode?: 'live' | 'test';
}

export async function createKey(db: Db, prefix: string, defaultRate: number, accountId: string, opts: NewKey) {
  // 32 random bytes give 43-44 base58 characters; pad so the length never drops below 32.
  if (opts.mode === 'test') {
    throw new ApiError('INVALID_INPUT', 'mode: this server does not issue test keys.', [{ field: 'mode', message: 'test keys are not available' }]);
  }
  let body = base58(crypto.randomBytes(32));
  while (body.length < 43) body = '1' + body;
  const key = `${prefix}live_${body}`;
  const start = key.slice(0, `${prefix}live_`.length + 4);
  const id = newId('key');
  const { rows } = await db.query(
    `INSERT INTO api_keys (id, account_id, name, key_hash, start, daily_cap_cents, rate_limit_per_minute)
     SELECT $1, a.id, $3, $4, $5, $6, $7 FROM accounts a WHERE a.id = $2
     RETURNING id, name, start, daily_cap_cents, rate_limit_per_minute, created_at`,
    [id, accountId, opts.name ?? 'default', hashKey(key), start, opts.dailyCapCents ?? null, opts.rateLimitPerMinute ?? defaultRate],
  );
  const r = rows[0];
  if (!r) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${accountId}.`);
  return {
    id: r.id as string, key, start: r.start as string, name: r.name as string,
    dailyCapCents: r.daily_cap_cents as number | null, rateLimitPerMinute: r.rate_limit_per_minute as number,
    createdAt: (r.created_at as Date).toISOString(),
  };
}

export async function revokeKey(db: Db, keyId: string): Promise<{ id: string; revokedAt: string }> {
  const { rows } = await db.query(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id, revoked_at`, [keyId]);
  if (!rows[0]) throw new ApiError('KEY_NOT_FOUND', `No key ${keyId}.`);
  return { id: rows[0].id, revokedAt: (rows[0].revoked_at as Date).toISOString() };
}

/** One key's lookup; `found` is its answer once it has answered with a key, for the synchronous cached(). */
interface CachedLookup { at: number; record: Promise<KeyRecord | null>; found?: KeyRecord; unknown?: boolean }

/**
 * Resolves bearer keys to key records, caching each answer (found, unknown or revoked) briefly. The cache
 * is keyed by the key itself (it is in this process's memory with every request anyway), so a cached
 * request costs no hashing; concurrent requests with one expired key share one lookup.
 */
export class KeyResolver {
  private cache = new Map<string, CachedLookup>();
  private keyRe: RegExp;
  private unknownKeys = new UnknownKeyLimiter();

  constructor(private db: Db, prefix: string, private ttlMs = 500) {
    this.keyRe = new RegExp(`^${prefix}live_[1-9A-HJ-NP-Za-km-z]{32,64}$`);
  }

  /**
   * The key's record when this process looked it up within the cache's lifetime and it is valid;
   * undefined otherwise (ask authenticate()). Lets the request path skip a promise per request.
   */
  cached(header: string | undefined): KeyRecord | undefined {
    if (header === undefined || !header.startsWith('Bearer ')) return undefined;
    const hit = this.cache.get(header.slice(7));
    if (!hit || Date.now() - hit.at > this.ttlMs) return undefined;
    return hit.found && !hit.found.revokedAt ? hit.found : undefined;
  }

  /** `address`: the client's, for the limit on unknown keys (unknown-keys.ts). */
  async authenticate(header: string | undefined, address?: string): Promise<KeyRecord> {
    if (header === undefined || header === '') throw new ApiError('API_KEY_MISSING', 'Send your API key as "Authorization: Bearer <key>".');
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m) throw new ApiError('API_KEY_INVALID', 'The Authorization header must be "Bearer <key>".');
    const key = m[1];
    const now = Date.now();
    let hit = this.cache.get(key);
    if (!hit || now - hit.at > (hit.unknown ? UNKNOWN_KEY_TTL_MS : this.ttlMs)) {
      if (!this.keyRe.test(key)) throw new ApiError('API_KEY_INVALID', 'The API key is not valid.');
      // A key this process has seen valid is looked up again whatever its address has been doing.
      if (!hit?.found) this.unknownKeys.check(address, now);
      const entry: CachedLookup = { at: now, record: this.lookup(hashKey(key)) };
      if (this.cache.size > 50_000) this.cache.clear();
      this.cache.set(key, entry);
      // A failed lookup (database away) is not an answer: the next request asks again.
      entry.record.then((r) => {
        if (r) entry.found = r;
        else { entry.unknown = true; this.unknownKeys.note(address); }
      }, () => { if (this.cache.get(key) === entry) this.cache.delete(key); });
      hit = entry;
    }
    const record = await hit.record;
    if (!record) throw new ApiError('API_KEY_INVALID', 'The API key is not valid.');
    if (record.revokedAt) throw new ApiError('API_KEY_REVOKED', 'The API key has been revoked.');
    return record;
  }

  private async lookup(hash: Buffer): Promise<KeyRecord | null> {
    const { rows } = await this.db.query({ name: 'key-lookup',
      text: `SELECT id, account_id, name, start, created_at, daily_cap_cents, rate_limit_per_minute, revoked_at
             FROM api_keys WHERE key_hash = $1`, values: [hash] });
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id, accountId: r.account_id, name: r.name, start: r.start, createdAt: r.created_at,
      dailyCapCents: r.daily_cap_cents, rateLimitPerMinute: r.rate_limit_per_minute, revokedAt: r.revoked_at,
    };
  }
}
