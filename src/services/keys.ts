// API keys: created with a CSPRNG, stored only as a SHA-256 hash, looked up per request through a
// short-lived cache (key-resolver.ts) so that a revocation reaches every node within the cache's
// lifetime (< 1 s), and the node that revokes a key at once.
import crypto from 'node:crypto';
import { ApiError, invalidInput } from '../domain/errors.ts';
import { transaction, type Db, type Queryable } from '../db/pool.ts';
import {
  accountOfKey,
  creatorOfKey,
  insertKey,
  keysWithUse,
  lockAndCountLiveKeys,
  revokeKeyRow,
} from '../db/api-keys.ts';
import { NO_SOURCE, recordAudit, type AuditSource } from '../audit/record.ts';
import { newId } from '../domain/ids.ts';
import { accountFor, authorize } from '../domain/authorize.ts';
import type { KeyMode, KeyPrincipal, Principal } from '../domain/principal.ts';

export type { KeyMode } from '../domain/principal.ts';

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
  /** A test key's renders move no money and are made by the service itself (docs/api.md "Test keys"). */
  mode: KeyMode;
  /**
   * When the key was looked up for a request: its account's live keys and the highest rate limit among
   * them, the limit those keys share (RateLimits.consumeKey).
   */
  account?: { liveKeys: number; rateLimitPerMinute: number };
  /** The key as who acts (domain/principal.ts), made with the record: no object per request. */
  principal: KeyPrincipal;
}

export interface NewKey {
  name?: string;
  dailyCapCents?: number | null;
  rateLimitPerMinute?: number;
  /** `test` keys render nothing billable (docs/api.md "Test keys"). */
  mode?: KeyMode;
  /** The person who makes it (null or absent: the operator). */
  createdBy?: string | null;
}

/** Who creates or revokes a key, and from where: the audit event's actor and source. */
export interface KeyAudit {
  by: Principal;
  src?: AuditSource;
}

/** Who made a key (docs/api.md "Teams: members and roles"): a member by email, or the operator. */
export type CreatedBy = { type: 'member'; email: string } | { type: 'operator' };

export const createdByOf = (email: string | null): CreatedBy =>
  email === null ? { type: 'operator' } : { type: 'member', email };

/** Creates a key and its `key.created` event in one transaction of its own (createKeyIn). */
export function createKey(
  db: Db,
  prefix: string,
  defaultRate: number,
  accountId: string,
  opts: NewKey,
  audit: KeyAudit,
) {
  return transaction(db, (tx) => createKeyIn(tx, prefix, defaultRate, accountId, opts, audit));
}

/** Creates a key inside `tx`, with its `key.created` audit event. */
export async function createKeyIn(
  tx: Queryable,
  prefix: string,
  defaultRate: number,
  accountId: string,
  opts: NewKey,
  audit: KeyAudit,
) {
  // 32 random bytes give 43-44 base58 characters; pad so the length never drops below 32.
  let body = base58(crypto.randomBytes(32));
  while (body.length < 43) body = '1' + body;
  const mode = opts.mode ?? 'live';
  const key = `${prefix}${mode}_${body}`;
  const start = key.slice(0, `${prefix}${mode}_`.length + 4);
  const id = newId('key');
  const r = await insertKey(tx, {
    id,
    accountId,
    name: opts.name ?? 'default',
    hash: hashKey(key),
    start,
    dailyCapCents: opts.dailyCapCents ?? null,
    rateLimitPerMinute: opts.rateLimitPerMinute ?? defaultRate,
    mode,
    createdBy: opts.createdBy ?? null,
  });
  if (!r) throw new ApiError('ACCOUNT_NOT_FOUND', `No account ${accountId}.`);
  const src = audit.src ?? NO_SOURCE;
  await recordAudit(tx, {
    account: accountId,
    action: 'key.created',
    actor: audit.by,
    target: { type: 'api_key', id: r.id },
    ...src,
    details: { name: r.name, mode: r.mode, start: r.start },
  });
  return {
    id: r.id,
    key,
    start: r.start,
    name: r.name,
    dailyCapCents: r.daily_cap_cents,
    rateLimitPerMinute: r.rate_limit_per_minute,
    mode: r.mode,
    createdAt: r.created_at.toISOString(),
  };
}

/** The bounds on a key its account's owner creates (the admin API sets any rate and any number). */
export interface OwnerBounds {
  maxRateLimitPerMinute: number;
  maxLiveKeys: number;
}

/**
 * A key created by its account's owner: a rate limit it chooses is at most the operator's ceiling (400 naming
 * `rateLimitPerMinute`), and at most `maxLiveKeys` live keys per account, counted under a lock.
 */
export async function createOwnerKey(
  db: Db,
  prefix: string,
  defaultRate: number,
  accountId: string,
  opts: NewKey,
  b: OwnerBounds,
  audit: KeyAudit,
) {
  const rate = opts.rateLimitPerMinute; // none chosen: the operator's default, whatever the ceiling
  if (
    rate !== undefined &&
    !(Number.isInteger(rate) && rate >= 1 && rate <= b.maxRateLimitPerMinute)
  ) {
    throw invalidInput([
      {
        field: 'rateLimitPerMinute',
        message: `must be a whole number from 1 to ${b.maxRateLimitPerMinute}`,
      },
    ]);
  }
  return transaction(db, async (tx) => {
    if ((await lockAndCountLiveKeys(tx, accountId)) >= b.maxLiveKeys) {
      throw invalidInput([
        {
          field: 'name',
          message: `an account has at most ${b.maxLiveKeys} live keys; revoke one first`,
        },
      ]);
    }
    return createKeyIn(tx, prefix, defaultRate, accountId, opts, audit);
  });
}

/**
 * Revokes a key (of `accountId` only, when given) and records `key.revoked` the first time, in one
 * transaction; null when there is no such key.
 */
export function revokeKeyAudited(
  db: Db,
  keyId: string,
  accountId: string | null,
  audit: KeyAudit,
): Promise<{ id: string; revokedAt: string } | null> {
  return transaction(db, async (tx) => {
    const r = await revokeKeyRow(tx, keyId, accountId);
    if (!r) return null;
    if (r.newly) {
      await recordAudit(tx, {
        account: r.account_id,
        action: 'key.revoked',
        actor: audit.by,
        target: { type: 'api_key', id: r.id },
        ...(audit.src ?? NO_SOURCE),
      });
    }
    return { id: r.id, revokedAt: r.revoked_at.toISOString() };
  });
}

/** The operator's revocation of any key (admin API, command line): KEY_NOT_FOUND when none. */
export async function revokeKey(db: Db, keyId: string, audit: KeyAudit) {
  const r = await revokeKeyAudited(db, keyId, null, audit);
  if (!r) throw new ApiError('KEY_NOT_FOUND', `No key ${keyId}.`);
  return r;
}

export interface KeyUse {
  id: string;
  name: string;
  start: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  dailyCapCents: number | null;
  rateLimitPerMinute: number;
  spentTodayCents: number;
  mode: KeyMode;
  createdBy: CreatedBy;
  /** The person who made it, for `own` grants (null: the operator). */
  createdById: string | null;
}

/** The account's keys with their use, newest first (last use to the minute). */
export async function listKeys(db: Db, accountId: string, timeZone: string): Promise<KeyUse[]> {
  return (await keysWithUse(db, accountId, timeZone)).map((r) => ({
    id: r.id,
    name: r.name,
    start: r.start,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
    dailyCapCents: r.daily_cap_cents,
    rateLimitPerMinute: r.rate_limit_per_minute,
    spentTodayCents: r.spent_today,
    mode: r.mode,
    createdBy: createdByOf(r.created_by_email),
    createdById: r.created_by,
  }));
}

/** API keys as the HTTP routes and the studio manage them: the database stays in this layer. */
export class ApiKeys {
  constructor(
    private db: Db,
    private prefix: string,
    private defaultRate: number,
    private resolver: { forget(keyId: string): void } | null = null,
  ) {}

  /** A key the operator (or the system) creates for `accountId`: any rate, any number. */
  async create(p: Principal, accountId: string, opts: NewKey, src?: AuditSource) {
    const account = accountFor(p, 'accounts.administer', accountId);
    return createKey(this.db, this.prefix, this.defaultRate, account, opts, { by: p, src });
  }

  /** A key a member creates in their account, within the bounds (createOwnerKey). */
  async createOwn(p: Principal, opts: NewKey, bounds: OwnerBounds, src?: AuditSource) {
    const account = accountFor(p, 'keys.create');
    const createdBy = p.kind === 'member' ? p.personId : null;
    const audit = { by: p, src };
    const o = { ...opts, createdBy };
    return createOwnerKey(this.db, this.prefix, this.defaultRate, account, o, bounds, audit);
  }

  /**
   * The operator's revocation of any account's key. Revoked here: it stops at once in this process
   * (`resolver`), within a second on the others.
   */
  async revoke(p: Principal, keyId: string, src?: AuditSource) {
    authorize(p, 'accounts.administer');
    return revokeKey(this.db, keyId, { by: p, src }).finally(() => this.resolver?.forget(keyId));
  }

  /**
   * Revokes a key of the principal's account; false when the account has no such key. A role that
   * may revoke only its own keys (a developer) is refused the others'.
   */
  async revokeOwn(p: Principal, keyId: string, src?: AuditSource): Promise<boolean> {
    if (p.kind !== 'member' && p.kind !== 'key') throw new Error('revokeOwn: a member acts');
    const creator = await creatorOfKey(this.db, p.account, keyId);
    const account = accountFor(p, 'keys.revoke', undefined, {
      createdBy: creator?.created_by ?? null,
    });
    if (!creator) return false;
    const r = revokeKeyAudited(this.db, keyId, account, { by: p, src });
    return (await r.finally(() => this.resolver?.forget(keyId))) !== null;
  }

  /** Who made the key of a request (GET /v1/me). */
  async creatorOf(p: Principal, keyId: string): Promise<CreatedBy> {
    const account = accountFor(p, 'models.view');
    return createdByOf((await creatorOfKey(this.db, account, keyId))?.email ?? null);
  }

  /** The account of a key (the operator's console). */
  async accountOf(p: Principal, keyId: string) {
    authorize(p, 'accounts.administer');
    return accountOfKey(this.db, keyId);
  }

  /**
   * The account's keys with their use: part of what Usage shows (spend per key). The operator names
   * the account.
   */
  async list(p: Principal, timeZone: string, account?: string) {
    return listKeys(this.db, accountFor(p, 'usage.view', account), timeZone);
  }
}
