// The hash chain of an account's events (docs/api.md "Audit log"): `hash` is the lowercase hex
// SHA-256 of `prevHash` followed by the event's canonical JSON without `hash`, RFC 8785 (JSON
// Canonicalization Scheme) as the maintained `canonicalize` package writes it. (The `canonical`
// helper in services/generation-create.ts only sorts keys for an idempotency fingerprint; it is not
// RFC 8785 and not shared.) Pure: used when an event is written and when a chain is verified.
import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import type { AuditRow } from '../db/audit-events.ts';
import type { AuditAction } from './actions.ts';

/** The `prevHash` of an account's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** Who did it: from the principal (audit/actor.ts). `email` and `name` only when known. */
export interface AuditActor {
  type: 'member' | 'key' | 'operator' | 'system';
  id: string | null;
  email?: string;
  name?: string;
}

/** What it was done to. */
export interface AuditTarget {
  type: string;
  id: string;
}

/** An event as the APIs show it, and as its hash covers it (all but `hash`). */
export interface AuditEvent {
  id: string;
  at: string;
  action: AuditAction;
  actor: AuditActor;
  target: AuditTarget | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
  hash: string;
  prevHash: string;
}

/** The event's hash: SHA-256 over `prevHash` then the RFC 8785 JSON of everything but `hash`. */
export function eventHash(e: Omit<AuditEvent, 'hash'> & { hash?: string }): string {
  const { hash: _ignored, ...body } = e;
  const json = canonicalize(body);
  if (json === undefined) throw new Error('audit event: not serializable');
  return crypto
    .createHash('sha256')
    .update(e.prevHash + json, 'utf8')
    .digest('hex');
}

/** A stored row as the event it records (the actor's absent email and name left out). */
export function eventOf(r: AuditRow): AuditEvent {
  const actor: AuditActor = { type: r.actor.type as AuditActor['type'], id: r.actor.id };
  if (r.actor.email !== undefined) actor.email = r.actor.email;
  if (r.actor.name !== undefined) actor.name = r.actor.name;
  return {
    id: r.id,
    at: r.at.toISOString(),
    action: r.action as AuditAction,
    actor,
    target: r.target,
    ip: r.ip,
    userAgent: r.user_agent,
    details: r.details,
    hash: r.hash,
    prevHash: r.prev_hash,
  };
}

/** Where a chain does not hold: the first event whose link or hash is wrong, and which. */
export interface ChainBreak {
  id: string;
  seq: number;
  problem: 'link' | 'hash';
}

/**
 * Checks `rows` (oldest first) as the continuation of a chain whose last hash was `prevHash`:
 * each event must link to the one before it and hash to what it says. A changed event fails its
 * hash; a removed or moved one breaks the link of the event after it.
 */
export function checkChain(rows: readonly AuditRow[], prevHash: string): ChainBreak | null {
  let prev = prevHash;
  for (const r of rows) {
    if (r.prev_hash !== prev) return { id: r.id, seq: r.seq, problem: 'link' };
    if (eventHash(eventOf(r)) !== r.hash) return { id: r.id, seq: r.seq, problem: 'hash' };
    prev = r.hash;
  }
  return null;
}
