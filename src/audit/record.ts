// Writing an event (docs/api.md "Audit log"): inside the transaction of the change it records, so
// both commit or neither does. The append takes the account's lock (db/audit-events.ts
// lockAuditHead), so concurrent writers of one account each link to the event committed before
// theirs: one unbroken chain however many processes write.
import { insertAuditEvent, lockAuditHead } from '../db/audit-events.ts';
import type { Queryable } from '../db/pool.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/principal.ts';
import type { AuditAction } from './actions.ts';
import { actorFor, type ActorHints } from './actor.ts';
import {
  eventHash,
  GENESIS_HASH,
  type AuditActor,
  type AuditEvent,
  type AuditTarget,
} from './chain.ts';

/** Where a request came from, as the edge saw it; null for the worker, Stripe's events, the CLI. */
export interface AuditSource {
  ip: string | null;
  userAgent: string | null;
}

export const NO_SOURCE: AuditSource = Object.freeze({ ip: null, userAgent: null });

export interface AuditInput {
  /** The account whose log it joins. */
  account: string;
  action: AuditAction;
  /** The principal that acted (its actor is made here) or an actor already made. */
  actor: Principal | AuditActor;
  /** Added to a principal's actor: a member's email, a key's name. */
  hints?: ActorHints;
  target?: AuditTarget | null;
  ip?: string | null;
  userAgent?: string | null;
  details?: Record<string, unknown>;
}

const isPrincipal = (a: Principal | AuditActor): a is Principal => 'kind' in a;

/**
 * Appends one event to the account's chain through `q`, which must be a client inside the change's
 * transaction (the lock it takes lasts until that transaction ends). Returns the event.
 */
export async function recordAudit(q: Queryable, input: AuditInput): Promise<AuditEvent> {
  const actor = isPrincipal(input.actor)
    ? await actorFor(q, input.actor, input.hints)
    : input.actor;
  const head = await lockAuditHead(q, input.account);
  const body: Omit<AuditEvent, 'hash'> = {
    // made under the lock, so ids (time-ordered) follow the chain within a process
    id: newId('aud'),
    at: new Date().toISOString(),
    action: input.action,
    actor,
    target: input.target ?? null,
    ip: input.ip ?? null,
    userAgent: input.userAgent ?? null,
    details: input.details ?? {},
    prevHash: head?.hash ?? GENESIS_HASH,
  };
  const event: AuditEvent = { ...body, hash: eventHash(body) };
  await insertAuditEvent(q, {
    id: event.id,
    account_id: input.account,
    seq: (head?.seq ?? 0) + 1,
    at: event.at,
    action: event.action,
    actor: event.actor,
    target: event.target,
    ip: event.ip,
    user_agent: event.userAgent,
    details: event.details,
    prev_hash: event.prevHash,
    hash: event.hash,
  });
  return event;
}
