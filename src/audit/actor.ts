// The actor of an event, made from the principal (domain/principal.ts actorOf) the way the change
// itself was authorized, so the log names who really acted. A member is named by their email too:
// the caller's when it has it at hand, else looked up (memberEmail).
import { personById } from '../db/people.ts';
import type { Queryable } from '../db/pool.ts';
import { actorOf, type Principal } from '../domain/principal.ts';
import type { AuditActor } from './chain.ts';

/** A member's email: their person's (migrations/030). */
export async function memberEmail(q: Queryable, personId: string): Promise<string | null> {
  return (await personById(q, personId))?.email ?? null;
}

/** What the caller may add to the principal: the member's email or a key's name, if known. */
export interface ActorHints {
  email?: string | null;
  name?: string | null;
}

/** The actor of `p`; for a member without an `email` hint, their email is looked up. */
export async function actorFor(
  q: Queryable,
  p: Principal,
  hints: ActorHints = {},
): Promise<AuditActor> {
  const { type, id } = actorOf(p);
  const actor: AuditActor = { type, id };
  const email = hints.email ?? (p.kind === 'member' ? await memberEmail(q, p.personId) : null);
  if (email) actor.email = email;
  if (hints.name) actor.name = hints.name;
  return actor;
}
