// Webhook endpoints of an account and their deliveries (docs/api.md "Webhooks"). Events are written by
// a trigger in the same transaction as the change (migrations/009); the workers deliver them
// (src/webhooks/dispatcher.ts). This is the account's view of both. Endpoints have a mode, as Stripe's
// do (migrations/025): an API key makes, sees and deletes its own mode's only, so a test key can
// neither read a live endpoint's secret nor remove it; the studio sees both.
import crypto from 'node:crypto';
import { transaction, type Db } from '../db/pool.ts';
import {
  insertEndpointBelow,
  liveEndpoint,
  liveEndpoints,
  markEndpointDeleted,
  type EndpointMode,
  type EndpointModes,
  type EndpointRow,
} from '../db/webhook-endpoints.ts';
import { deliveriesOf } from '../db/webhook-deliveries.ts';
import { objectBody } from '../domain/body.ts';
import { ApiError, invalidInput, type FieldProblem } from '../domain/errors.ts';
import { isId, newId } from '../domain/ids.ts';
import { compileFieldCheck } from '../domain/inputs.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';
import { resendDelivery } from '../db/webhook-deliveries-resend.ts';
import { accountFor } from '../domain/authorize.ts';
import type { Principal } from '../domain/principal.ts';
import { NO_SOURCE, recordAudit, type AuditSource } from '../audit/record.ts';
import { literalAddressRefusal } from '../net/address-guard.ts';

export const EVENT_TYPES = [
  'generation.started',
  'generation.succeeded',
  'generation.failed',
  'generation.refunded',
  'account.balance_low',
  'budget.threshold_reached',
] as const;
/**
 * Endpoints an account may have of each mode: counted per mode, so test endpoints (a CI's test key)
 * can never use up the room of live ones.
 */
export const MAX_ENDPOINTS = 10;

export type { EndpointMode, EndpointModes };

/** The endpoints a principal sees: a key its own mode's (as Stripe's keys do), the studio both. */
const modesOf = (p: Principal): EndpointModes => (p.kind === 'key' ? p.mode : 'both');

const checkUrl = compileFieldCheck({ name: 'url', type: 'url', required: true, default: null });
const notFound = () => new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', 'No such webhook endpoint.');

export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  secret?: string;
  enabled: boolean;
  /** `test`: receives the events of test renders only (`livemode: false`); `live`: live ones only. */
  mode: EndpointMode;
  createdAt: string;
}

function view(r: EndpointRow, withSecret: boolean): EndpointView {
  // the secret (when shown) before `enabled`: the answer's field order
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    ...(withSecret ? { secret: r.secret } : {}),
    enabled: r.enabled,
    mode: r.mode,
    createdAt: r.created_at.toISOString(),
  };
}

/** `{ url, events? }`, every bad field named. */
function parseEndpoint(
  body: unknown,
  allowPrivateUrls: boolean,
): { url: string; events: string[] } {
  const b = objectBody(body);
  const problems: FieldProblem[] = [];
  for (const k of Object.keys(b))
    if (k !== 'url' && k !== 'events')
      problems.push({ field: k.slice(0, 200), message: 'is not a field of a webhook endpoint' });
  if (b.url === undefined || b.url === null)
    problems.push({ field: 'url', message: 'is required' });
  else {
    // A literal private address fails at every delivery: refused now (a host name is checked when
    // it is resolved, at each delivery, as before).
    const why =
      checkUrl(b.url) ?? (allowPrivateUrls ? undefined : literalAddressRefusal(b.url as string));
    if (why) problems.push({ field: 'url', message: why });
  }
  let events: string[] = [...EVENT_TYPES];
  if (b.events !== undefined && b.events !== null) {
    if (
      !Array.isArray(b.events) ||
      b.events.length === 0 ||
      b.events.length > EVENT_TYPES.length * 4 ||
      b.events.some((e) => !(EVENT_TYPES as readonly unknown[]).includes(e))
    ) {
      problems.push({
        field: 'events',
        message: `must be a non-empty list of ${EVENT_TYPES.join(', ')}`,
      });
    } else {
      events = EVENT_TYPES.filter((t) => (b.events as unknown[]).includes(t));
    }
  }
  if (problems.length > 0) throw invalidInput(problems);
  return { url: b.url as string, events };
}

export class WebhookEndpoints {
  /** `allowPrivateUrls`: RENDERGATE_ALLOW_PRIVATE_URLS, which lets deliveries reach any address. */
  constructor(
    private db: Db,
    private allowPrivateUrls = false,
  ) {}

  /**
   * An endpoint of a key's own mode (the API), or of the mode a member chose in the studio (live
   * unless said).
   */
  async create(
    p: Principal,
    body: unknown,
    chosen: EndpointMode = 'live',
    src: AuditSource = NO_SOURCE,
  ) {
    const accountId = accountFor(p, 'webhooks.manage');
    const mode: EndpointMode = p.kind === 'key' ? p.mode : chosen;
    const { url, events } = parseEndpoint(body, this.allowPrivateUrls);
    // Standard Webhooks secrets: whsec_ and the base64 of 24 random bytes.
    const secret = `whsec_${crypto.randomBytes(24).toString('base64')}`;
    // Concurrent creates of one account count one at a time (a lock of its own, not the balance row's).
    const row = await transaction(this.db, async (tx) => {
      const made = await insertEndpointBelow(tx, MAX_ENDPOINTS, {
        id: newId('whe'),
        accountId,
        url,
        events,
        secret,
        mode,
      });
      if (made) {
        await recordAudit(tx, {
          account: accountId,
          action: 'webhook_endpoint.created',
          actor: p,
          target: { type: 'webhook_endpoint', id: made.id },
          ...src,
          details: { url, mode, events },
        });
      }
      return made;
    });
    if (!row) {
      throw new ApiError(
        'WEBHOOK_ENDPOINT_LIMIT',
        `An account has at most ${MAX_ENDPOINTS} ${mode} webhook endpoints; delete one first.`,
      );
    }
    return view(row, true);
  }

  /** Another mode's endpoint is unknown to the reader, as another account's is. */
  private async row(accountId: string, modes: EndpointModes, id: string): Promise<EndpointRow> {
    if (!isId('whe', id)) throw notFound();
    const row = await liveEndpoint(this.db, accountId, id, modes);
    if (!row) throw notFound();
    return row;
  }

  async get(p: Principal, id: string) {
    return view(await this.row(accountFor(p, 'webhooks.manage'), modesOf(p), id), true);
  }

  async list(
    p: Principal,
    q: { limit: number; cursor: string | null },
  ): Promise<Page<EndpointView>> {
    const accountId = accountFor(p, 'webhooks.manage');
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const rows = await liveEndpoints(this.db, accountId, modesOf(p), after, q.limit + 1);
    const data = rows.slice(0, q.limit).map((r) => view(r, false));
    return {
      data,
      nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id) : null,
    };
  }

  /** Deleted endpoints get no new events; their pending deliveries end failed when next attempted. */
  async delete(p: Principal, id: string, src: AuditSource = NO_SOURCE) {
    const accountId = accountFor(p, 'webhooks.manage');
    const modes = modesOf(p);
    if (!isId('whe', id)) throw notFound();
    await transaction(this.db, async (tx) => {
      if (!(await markEndpointDeleted(tx, accountId, id, modes))) throw notFound();
      await recordAudit(tx, {
        account: accountId,
        action: 'webhook_endpoint.deleted',
        actor: p,
        target: { type: 'webhook_endpoint', id },
        ...src,
      });
    });
    return { id, deleted: true };
  }

  async deliveries(
    p: Principal,
    endpointId: string,
    q: { limit: number; cursor: string | null },
  ): Promise<Page<Record<string, unknown>>> {
    const accountId = accountFor(p, 'webhooks.manage');
    await this.row(accountId, modesOf(p), endpointId);
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const rows = await deliveriesOf(this.db, endpointId, after, q.limit + 1);
    const data = rows.slice(0, q.limit).map((r) => ({
      id: r.id,
      eventId: r.event_id,
      type: r.type,
      generationId: r.generation_id,
      attempts: r.attempts,
      status: r.status,
      lastResponseStatus: r.last_response_status,
      lastError: r.last_error,
      createdAt: r.created_at.toISOString(),
      nextAttemptAt: r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
    }));
    return {
      data,
      nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id) : null,
    };
  }

  /**
   * One more attempt of a delivery, now (the studio's Resend, for endpoints of either mode): the same
   * webhook-id and body. A delivery being sent at this moment is left to that attempt: the answer
   * says so.
   */
  async resend(p: Principal, deliveryId: string): Promise<'queued' | 'in-flight'> {
    const accountId = accountFor(p, 'webhooks.manage');
    if (!isId('msg', deliveryId)) throw new ApiError('NOT_FOUND', 'No such webhook delivery.');
    const outcome = await resendDelivery(this.db, accountId, deliveryId);
    if (outcome === 'not-found') throw new ApiError('NOT_FOUND', 'No such webhook delivery.');
    return outcome;
  }
}
