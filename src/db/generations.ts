// The statements on `generations` for the API and the housekeeping: reads, the owner's cancel and
// delete, and the removal of files. A create is the ledger's charge (ledger/create-statements.ts, the
// SQL function in ledger/sql/create_generations.sql); the queue's statements are in
// generations-claim.ts (claiming) and generations-attempt.ts (what an attempt writes under its lease).
import type { Queryable, Tx } from './pool.ts';

/** The columns of the public view (services/generation-view.ts). */
export const GENERATION_COLUMNS = `id, model_id, inputs, status, cost_cents, refunded_cents, content_key, content_type,
  content_bytes, content_etag, text_output, error_code, error_message, created_at, started_at, completed_at,
  progress, expires_at, content_removed_at, mode`;

/**
 * Positions are counted up to this many (an index-only scan of the model's waiting renders that stops
 * there): a render further back shows this number, a lower bound, and never costs a scan of the queue.
 * Every create and every waiting row of a list pays for the count: at 10,000 a create over a deep queue
 * spent about 3 ms of PostgreSQL CPU on it (a fifth of the throughput of creates, measured by the bench),
 * at 100 it is a few microseconds, and a client far back in a queue learns "100 or more" either way.
 */
export const QUEUE_POSITION_CAP = 100;

/** The queue position of generation `g` (a table alias) as a column: 1 = the next of its model to start. */
export const QUEUE_POSITION = (
  g: string,
) => `CASE WHEN ${g}.status = 'queued' AND ${g}.started_at IS NULL THEN
  (SELECT count(*)::int FROM (SELECT 1 FROM generations w WHERE w.model_id = ${g}.model_id AND w.status = 'queued'
     AND w.started_at IS NULL AND w.id < ${g}.id LIMIT ${QUEUE_POSITION_CAP - 1}) ahead) + 1 END AS queue_position`;

export type Row = Record<string, unknown>;

/**
 * A replay's row with its queue position: the renders of its model created before it and neither
 * started nor finished at its creation, read from their times (bounded to the rows created shortly before).
 */
export async function replayRow(q: Queryable, id: string): Promise<Row> {
  const { rows } = await q.query<Row>({
    name: 'gen-replay',
    text: `
    SELECT g.id, g.model_id, g.inputs, g.cost_cents, g.created_at, g.mode, (SELECT count(*)::int FROM (
        SELECT 1 FROM (SELECT model_id, status, started_at, completed_at FROM generations
                       WHERE id < g.id ORDER BY id DESC LIMIT 100000) w
        WHERE w.model_id = g.model_id AND (w.started_at IS NULL OR w.started_at > g.created_at)
          AND (w.completed_at IS NULL OR w.completed_at > g.created_at)
        LIMIT ${QUEUE_POSITION_CAP - 1}) ahead) + 1 AS queue_position
    FROM generations g WHERE g.id = $1`,
    values: [id],
  });
  return rows[0];
}

/** A generation not deleted, with its account and queue position. */
export async function liveGeneration(q: Queryable, id: string): Promise<Row | null> {
  const { rows } = await q.query<Row>({
    name: 'gen-get',
    // With the counts its backend reported: an answer waiting for it (a chat request's) has them
    // without a read of its own (services/chat.ts tokens()).
    text: `SELECT ${GENERATION_COLUMNS}, account_id, input_tokens, output_tokens,
             ${QUEUE_POSITION('g')} FROM generations g
           WHERE id = $1 AND deleted_at IS NULL`,
    values: [id],
  });
  return rows[0] ?? null;
}

export interface ListFilter {
  after: string | null;
  status: string | null;
  modelId: string | null;
  limit: number;
  mode?: 'live' | 'test';
}

export async function listGenerations(
  q: Queryable,
  accountId: string,
  f: ListFilter,
): Promise<Row[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${GENERATION_COLUMNS}, ${QUEUE_POSITION('g')} FROM generations g
     WHERE account_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR id < $2)
       AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR model_id = $4) AND mode = $6
     ORDER BY id DESC LIMIT $5`,
    [accountId, f.after, f.status, f.modelId, f.limit, f.mode ?? 'live'],
  );
  return rows;
}

/** The row's public columns (and deleted_at), deleted or not. */
export async function generationRow(q: Queryable, id: string): Promise<Row | null> {
  const { rows } = await q.query<Row>(
    `SELECT ${GENERATION_COLUMNS}, deleted_at FROM generations WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** Locks the account's live generation of a key mode for a cancel or delete: its status and file key. */
export async function lockOwnGeneration(
  tx: Tx,
  accountId: string,
  id: string,
  mode: 'live' | 'test' = 'live',
): Promise<{ status: string; content_key: string | null } | null> {
  const { rows } = await tx.query(
    'SELECT status, content_key FROM generations WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL FOR UPDATE',
    [id, accountId, mode],
  );
  return (rows[0] as { status: string; content_key: string | null } | undefined) ?? null;
}

export async function markGenerationDeleted(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE generations SET deleted_at = now() WHERE id = $1', [id]);
}

/** Forgets a removed file, unless the row names another one by now. */
export async function forgetContent(q: Queryable, id: string, key: string): Promise<void> {
  await q.query('UPDATE generations SET content_key = NULL WHERE id = $1 AND content_key = $2', [
    id,
    key,
  ]);
}

/** The account of a generation (deleted or not), or null. */
/** The token counts the backend reported for a text render; null when it reported none. */
export async function reportedTokens(
  q: Queryable,
  id: string,
): Promise<{ input: number; output: number } | null> {
  const { rows } = await q.query<{ input: number | null; output: number | null }>({
    name: 'reported-tokens',
    text: 'SELECT input_tokens AS input, output_tokens AS output FROM generations WHERE id = $1',
    values: [id],
  });
  const r = rows[0];
  return r && r.input !== null && r.output !== null ? { input: r.input, output: r.output } : null;
}

export async function accountOfGeneration(q: Queryable, id: string): Promise<string | null> {
  const { rows } = await q.query<{ account_id: string }>(
    'SELECT account_id FROM generations WHERE id = $1',
    [id],
  );
  return rows[0]?.account_id ?? null;
}

export interface SpendRow {
  label: string;
  renders: number;
  spent: number;
}

/** Spend (charges minus refunds) of live renders created in [from, to), per key (the studio is "Studio") and per model. */
export async function spendOf(
  q: Queryable,
  accountId: string,
  from: Date,
  to: Date,
): Promise<{ byKey: SpendRow[]; byModel: SpendRow[] }> {
  const base = `FROM generations g LEFT JOIN api_keys k ON k.id = g.key_id
                WHERE g.account_id = $1 AND g.created_at >= $2 AND g.created_at < $3 AND g.mode = 'live'`;
  const agg =
    'count(*)::int AS renders, coalesce(sum(g.cost_cents - g.refunded_cents), 0)::bigint AS spent';
  const [byKey, byModel] = await Promise.all([
    q.query(
      `SELECT coalesce(k.name || ' (' || k.start || '…)', 'Studio') AS label, ${agg} ${base}
             GROUP BY 1 ORDER BY spent DESC, label`,
      [accountId, from, to],
    ),
    q.query(`SELECT g.model_id AS label, ${agg} ${base} GROUP BY 1 ORDER BY spent DESC, label`, [
      accountId,
      from,
      to,
    ]),
  ]);
  return { byKey: byKey.rows as SpendRow[], byModel: byModel.rows as SpendRow[] };
}

/** Renders waiting for a worker and running now (the queue gauges). */
export async function queueCounts(q: Queryable): Promise<{ waiting: number; running: number }> {
  const { rows } = await q.query<{ waiting: number; running: number }>({
    name: 'metrics-queue',
    text: `SELECT count(*) FILTER (WHERE lease_until IS NULL OR lease_until < now())::int AS waiting,
            count(*) FILTER (WHERE lease_until >= now())::int AS running
     FROM generations WHERE status = 'queued'`,
  });
  return { waiting: rows[0].waiting, running: rows[0].running };
}

/** Up to 100 queued renders past their deadline, oldest deadline first. */
export async function pastDeadline(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM generations WHERE status = 'queued' AND deadline_at < now() ORDER BY deadline_at LIMIT 100`,
  );
  return rows.map((r) => r.id);
}

/** Up to 100 files of deleted or refunded renders, still stored. */
export async function filesToPurge(
  q: Queryable,
): Promise<Array<{ id: string; content_key: string }>> {
  const { rows } = await q.query(
    `SELECT id, content_key FROM generations
     WHERE content_key IS NOT NULL AND (deleted_at IS NOT NULL OR status = 'refunded') LIMIT 100`,
  );
  return rows as Array<{ id: string; content_key: string }>;
}

/** Up to 100 files past their expires_at, locked for removal (passing over locked ones). */
export async function lockExpiredFiles(
  tx: Tx,
): Promise<Array<{ id: string; content_key: string }>> {
  const { rows } = await tx.query(
    `SELECT id, content_key FROM generations
     WHERE expires_at < now() AND content_removed_at IS NULL AND content_key IS NOT NULL
     ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED`,
  );
  return rows as Array<{ id: string; content_key: string }>;
}

export async function markContentRemoved(q: Queryable, ids: string[]): Promise<void> {
  await q.query('UPDATE generations SET content_removed_at = now() WHERE id = ANY ($1)', [ids]);
}
