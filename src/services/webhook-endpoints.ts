// Webhook endpoints of an account and their deliveries (docs/api.md "Webhooks"). Events are written by
// a trigger in the same transaction as the change (migrations/009); the workers deliver them
// (src/webhooks/dispatcher.ts). This is the account's view of both.
import crypto from 'node:crypto';
import { transaction, type Db } from '../db/pool.ts';
import { objectBody } from '../domain/body.ts';
import { ApiError, invalidInput, type FieldProblem } from '../domain/errors.ts';
import { isId, newId } from '../domain/ids.ts';
import { compileFieldCheck } from '../domain/inputs.ts';
import { decodeCursor, encodeCursor, type Page } from './paging.ts';

export const EVENT_TYPES = ['generation.started', 'generation.succeeded', 'generation.failed', 'generation.refunded'] as const;
export const MAX_ENDPOINTS = 10;

const checkUrl = compileFieldCheck({ name: 'url', type: 'url', required: true, default: null });
const notFound = () => new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', 'No such webhook endpoint.');

interface EndpointRow { id: string; url: string; events: string[]; secret: string; enabled: boolean; created_at: Date }

function view(r: EndpointRow, withSecret: boolean) {
  const v: Record<string, unknown> = { id: r.id, url: r.url, events: r.events };
  if (withSecret) v.secret = r.secret;
  v.enabled = r.enabled;
  v.createdAt = r.created_at.toISOString();
  return v;
}

/** `{ url, events? }`, every bad field named. */
function parseEndpoint(body: unknown): { url: string; events: string[] } {
  const b = objectBody(body);
  const problems: FieldProblem[] = [];
  for (const k of Object.keys(b)) if (k !== 'url' && k !== 'events') problems.push({ field: k.slice(0, 200), message: 'is not a field of a webhook endpoint' });
  if (b.url === undefined || b.url === null) problems.push({ field: 'url', message: 'is required' });
  else {
    const why = checkUrl(b.url);
    if (why) problems.push({ field: 'url', message: why });
  }
  let events: string[] = [...EVENT_TYPES];
  if (b.events !== undefined && b.events !== null) {
    if (!Array.isArray(b.events) || b.events.length === 0 || b.events.length > EVENT_TYPES.length * 4
      || b.events.some((e) => !(EVENT_TYPES as readonly unknown[]).includes(e))) {
      problems.push({ field: 'events', message: `must be a non-empty list of ${EVENT_TYPES.join(', ')}` });
    } else {
      events = EVENT_TYPES.filter((t) => (b.events as unknown[]).includes(t));
    }
  }
  if (problems.length > 0) throw invalidInput(problems);
  return { url: b.url as string, events };
}

export class WebhookEndpoints {
  constructor(private db: Db) {}

  async create(accountId: string, body: unknown) {
    const { url, events } = parseEndpoint(body);
    // Standard Webhooks secrets: whsec_ and the base64 of 24 random bytes.
    const secret = `whsec_${crypto.randomBytes(24).toString('base64')}`;
    const row = await transaction(this.db, async (tx) => {
      // Concurrent creates of one account count one at a time (a lock of its own, not the balance row's).
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`webhooks:${accountId}`]);
      const { rows: n } = await tx.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL', [accountId]);
      if (n[0].n >= MAX_ENDPOINTS) {
        throw new ApiError('WEBHOOK_ENDPOINT_LIMIT', `An account has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first.`);
      }
      const { rows } = await tx.query(
        'INSERT INTO webhook_endpoints (id, account_id, url, events, secret) VALUES ($1, $2, $3, $4, $5) RETURNING *',
        [newId('whe'), accountId, url, events, secret]);
      return rows[0] as EndpointRow;
    });
    return view(row, true);
  }

  private async row(accountId: string, id: string): Promise<EndpointRow> {
    if (!isId('whe', id)) throw notFound();
    const { rows } = await this.db.query('SELECT * FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL', [id, accountId]);
    if (!rows[0]) throw notFound();
    return rows[0] as EndpointRow;
  }

  async get(accountId: string, id: string) {
    return view(await this.row(accountId, id), true);
  }

  async list(accountId: string, q: { limit: number; cursor: string | null }): Promise<Page<Record<string, unknown>>> {
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const { rows } = await this.db.query(
      `SELECT * FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR id < $2)
       ORDER BY id DESC LIMIT $3`, [accountId, after, q.limit + 1]);
    const data = rows.slice(0, q.limit).map((r) => view(r as EndpointRow, false));
    return { data, nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id as string) : null };
  }

  /** Deleted endpoints get no new events; their pending deliveries end failed when next attempted. */
  async delete(accountId: string, id: string) {
    if (!isId('whe', id)) throw notFound();
    const { rowCount } = await this.db.query(
      'UPDATE webhook_endpoints SET deleted_at = now(), enabled = false WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL', [id, accountId]);
    if (rowCount === 0) throw notFound();
    return { id, deleted: true };
  }

  async deliveries(accountId: string, endpointId: string, q: { limit: number; cursor: string | null }): Promise<Page<Record<string, unknown>>> {
    await this.row(accountId, endpointId);
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    const { rows } = await this.db.query(
      `SELECT id, event_id, type, generation_id, attempts, status, last_response_status, created_at, next_attempt_at
       FROM webhook_deliveries WHERE endpoint_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
      [endpointId, after, q.limit + 1]);
    const data = rows.slice(0, q.limit).map((r) => ({
      id: r.id, eventId: r.event_id, type: r.type, generationId: r.generation_id, attempts: r.attempts, status: r.status,
      lastResponseStatus: r.last_response_status, createdAt: (r.created_at as Date).toISOString(),
      nextAttemptAt: r.next_attempt_at ? (r.next_attempt_at as Date).toISOString() : null,
    }));
    return { data, nextCursor: rows.length > q.limit ? encodeCursor(data[data.length - 1].id as string) : null };
  }
}
