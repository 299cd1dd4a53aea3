// Reads of the studio's History: an account's live generations with where each came from (the name
// of the key that made it; a render of the studio has no key), filtered by model and status. The
// studio acts live: test keys' renders are not shown (as the keys page says), as for a live key.
import type { Queryable } from './pool.ts';
import { QUEUE_POSITION_CAP } from './generations.ts';
import { LIVE_SESSION, SESSION_COLUMNS, type SessionRow } from './studio-sessions.ts';

export type KeyOfRow = {
  key_id: string | null;
  key_name: string | null;
  key_start: string | null;
  /** The email of the member who started a studio render (migrations/030). */
  started_by: string | null;
};

/** A row of History: only what the page shows (services/history.ts turns it into the row's view). */
export type HistoryRow = KeyOfRow & {
  id: string;
  model_id: string;
  status: string;
  cost_cents: number;
  refunded_cents: number;
  /** Instants as Date.prototype.toISOString() writes them (milliseconds, UTC). */
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  progress: number | null;
  has_content: boolean;
  content_type: string | null;
  text_output: string | null;
  error_code: string | null;
  error_message: string | null;
  /** The `prompt` input when it is a string, else null. */
  prompt: string | null;
  /** The first 301 characters of the `text` input when it is a string (the page shows 300), else null. */
  text: string | null;
  /** Waiting renders only: 1 = the next of its model to start, counted up to QUEUE_POSITION_CAP. */
  queue_position: number | null;
};

/** Where the page's statement finds its parameters: SQL expressions, placeholders or a subquery. */
type Params = { account: string; after: string; status: string; model: string; limit: string };

/** Status filter: `running` is a queued render that has started, `queued` one that waits to. */
const status = (p: Params) => `CASE ${p.status}::text WHEN 'queued' THEN g.status = 'queued'
  AND g.started_at IS NULL WHEN 'running' THEN g.status = 'queued' AND g.started_at IS NOT NULL
  ELSE g.status = ${p.status} END`;

const WAITING = `status = 'queued' AND started_at IS NULL`;
const CAP = QUEUE_POSITION_CAP - 1;

/**
 * The steps of the page's statement, their plan fixed by MATERIALIZED whatever the statistics say.
 * `page`: the rows shown (live ones), by the account's (account_id, id) index, each row's inputs
 * (json, stored as text) parsed to jsonb there, once: a cast in a later step is inlined into each of
 * its uses, four parses per row. Queue positions (the same numbers as the API's QUEUE_POSITION) are
 * counted per model on the page, not per row: for the page's oldest waiting render of a model, the
 * waiting renders ahead of it (up to the cap), and the ids of the next 100 waiting renders of the
 * model in order, as an array; a page row's place in that array is added to the count. A row beyond
 * those 100 is at the cap.
 * That is at most 2 × 100 index entries per model where a count per row read up to 100 per row, and
 * no window, sort or join of the page against every waiting render.
 */
const steps = (p: Params) => `page AS MATERIALIZED (
  SELECT g.id, g.model_id, g.status, g.cost_cents, g.refunded_cents, g.created_at, g.started_at,
    g.completed_at, g.progress, g.content_key IS NOT NULL AS has_content, g.content_type, g.text_output,
    g.error_code, g.error_message,
    g.inputs::jsonb AS j, g.key_id, k.name AS key_name, k.start AS key_start, sp.email AS started_by
  FROM generations g LEFT JOIN api_keys k ON k.id = g.key_id LEFT JOIN people sp ON sp.id = g.started_by
  WHERE g.account_id = ${p.account} AND g.deleted_at IS NULL AND g.mode = 'live'
    AND (${p.after}::text IS NULL OR g.id < ${p.after})
    AND (${p.status}::text IS NULL OR ${status(p)}) AND (${p.model}::text IS NULL OR g.model_id = ${p.model})
  ORDER BY g.id DESC LIMIT ${p.limit}
), firsts AS MATERIALIZED (
  SELECT f.model_id,
    (SELECT count(*)::int FROM (SELECT 1 FROM generations b WHERE b.model_id = f.model_id
      AND b.${WAITING} AND b.id < f.first ORDER BY b.id DESC LIMIT ${CAP}) ahead) AS ahead,
    ARRAY(SELECT w.id FROM generations w WHERE w.model_id = f.model_id AND w.${WAITING}
      AND w.id >= f.first ORDER BY w.id LIMIT ${CAP + 1}) AS next
  FROM (SELECT model_id, min(id) AS first FROM page WHERE ${WAITING} GROUP BY model_id) f
)`;

/** The page's rows as one JSON array of arrays, from the steps above. */
const ROWS = `SELECT coalesce(json_agg(json_build_array(p.id, p.model_id, p.status, p.cost_cents,
    p.refunded_cents, p.created_at, p.started_at, p.completed_at, p.progress, p.has_content,
    p.content_type, p.text_output, p.error_code, p.error_message,
    CASE WHEN jsonb_typeof(p.j->'prompt') = 'string' THEN p.j->>'prompt' END,
    CASE WHEN jsonb_typeof(p.j->'text') = 'string' THEN left(p.j->>'text', 301) END,
    p.key_id, p.key_name, p.key_start,
    CASE WHEN p.${WAITING}
      THEN least(coalesce(f.ahead + array_position(f.next, p.id) - 1, ${CAP}), ${CAP}) + 1 END,
    p.started_by)
    ORDER BY p.id DESC), '[]'::json) AS rows
  FROM page p LEFT JOIN firsts f ON f.model_id = p.model_id`;

const HISTORY = `WITH ${steps({ account: '$1', after: '$2', status: '$3', model: '$4', limit: '$5' })}
${ROWS}`;

/**
 * The session of a cookie (db/studio-sessions.ts) and its account's page, in one round trip: a page
 * view's other statement was the session's lookup, and each statement costs the server a write and a
 * read on the socket and PostgreSQL a bind and an execution. No session, no row; a session without an
 * account (the console's) reads no generation.
 */
const SESSION_HISTORY = `WITH s AS MATERIALIZED (${LIVE_SESSION}),
${steps({ account: '(SELECT account_id FROM s)', after: '$3', status: '$4', model: '$5', limit: '$6' })}
SELECT ${SESSION_COLUMNS}, (${ROWS}) AS rows
FROM s`;

/** A row as the JSON array carries it, in the statement's order; timestamps as ISO 8601 text. */
type WireRow = [
  id: string,
  model_id: string,
  status: string,
  cost_cents: number,
  refunded_cents: number,
  created_at: string,
  started_at: string | null,
  completed_at: string | null,
  progress: number | null,
  has_content: boolean,
  content_type: string | null,
  text_output: string | null,
  error_code: string | null,
  error_message: string | null,
  prompt: string | null,
  text: string | null,
  key_id: string | null,
  key_name: string | null,
  key_start: string | null,
  queue_position: number | null,
  started_by: string | null,
];

/**
 * An instant as PostgreSQL writes it in JSON ("2026-11-24T04:31:33.649222+00:00", to the microsecond,
 * in the session's time zone) as Date.prototype.toISOString() writes it ("2026-11-24T04:31:33.649Z").
 * In UTC (the usual case) by cutting the text, as new Date() would (it drops digits past the
 * millisecond): parsing a Date and writing it again, three times a row, cost as much as parsing the
 * whole page's JSON. Any other offset or form through Date.
 */
export function isoInstant(s: string): string {
  const n = s.length;
  if (
    n >= 25 &&
    n <= 32 &&
    n !== 26 &&
    s.endsWith('+00:00') &&
    s[4] === '-' &&
    s[10] === 'T' &&
    (n === 25 || s[19] === '.')
  ) {
    const ms = n === 25 ? '000' : (s.slice(20, n - 6) + '00').slice(0, 3);
    return `${s.slice(0, 19)}.${ms}Z`;
  }
  return new Date(s).toISOString();
}

const instant = (s: string | null) => (s === null ? null : isoInstant(s));

const historyRow = (w: WireRow): HistoryRow => ({
  id: w[0],
  model_id: w[1],
  status: w[2],
  cost_cents: w[3],
  refunded_cents: w[4],
  created_at: isoInstant(w[5]),
  started_at: instant(w[6]),
  completed_at: instant(w[7]),
  progress: w[8],
  has_content: w[9],
  content_type: w[10],
  text_output: w[11],
  error_code: w[12],
  error_message: w[13],
  prompt: w[14],
  text: w[15],
  key_id: w[16],
  key_name: w[17],
  key_start: w[18],
  queue_position: w[19],
  started_by: w[20],
});

/**
 * The account's History rows, newest first. They come as one JSON value (one field of one row), each row
 * an array rather than an object: the driver's parsing of each field of 21 rows of 20 columns was the
 * largest part of the page's CPU, and arrays parse in a third of the time objects with names do.
 */
export async function historyRows(
  db: Queryable,
  accountId: string,
  q: HistoryQuery,
): Promise<HistoryRow[]> {
  const { rows } = await db.query<{ rows: WireRow[] }>({
    name: 'studio-history',
    text: HISTORY,
    values: [accountId, q.afterId, q.status, q.modelId, q.limit],
  });
  return rows[0].rows.map(historyRow);
}

export type HistoryQuery = {
  limit: number;
  afterId: string | null;
  status: string | null;
  modelId: string | null;
};

/**
 * The live session of `idHash` (as liveSession() reads it) and, when it has an account, that account's
 * History rows as historyRows() reads them.
 */
export async function sessionHistoryRows(
  db: Queryable,
  session: { idHash: Buffer; idleSeconds: number },
  q: HistoryQuery,
): Promise<{ session: SessionRow | null; rows: HistoryRow[] }> {
  const { rows } = await db.query<SessionRow & { rows: WireRow[] }>({
    name: 'studio-session-history',
    text: SESSION_HISTORY,
    values: [session.idHash, session.idleSeconds, q.afterId, q.status, q.modelId, q.limit],
  });
  if (rows.length === 0) return { session: null, rows: [] };
  const { rows: wire, ...row } = rows[0];
  return { session: row, rows: wire.map(historyRow) };
}

/** Where one generation of the account came from; null when there is no such generation. */
export async function generationSource(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<KeyOfRow | null> {
  const { rows } = await db.query<KeyOfRow>(
    `SELECT g.key_id, k.name AS key_name, k.start AS key_start, sp.email AS started_by
     FROM generations g LEFT JOIN api_keys k ON k.id = g.key_id LEFT JOIN people sp ON sp.id = g.started_by
     WHERE g.id = $1 AND g.account_id = $2`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

/** How many of the account's latest started renders an estimate looks through (an index range). */
const ESTIMATE_SCAN = 200;
/** Of those, the succeeded renders of the model an estimate is the median of. */
const ESTIMATE_SAMPLE = 20;

/**
 * The median seconds from start to end of the account's latest succeeded renders of a model, or
 * null with none: History's estimate of a running render's time left when its backend reports no
 * progress. Bounded: it reads the account's latest started renders by generations_account_started.
 */
export async function medianRenderSeconds(
  db: Queryable,
  accountId: string,
  modelId: string,
): Promise<number | null> {
  const { rows } = await db.query<{ seconds: number | null }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) AS seconds FROM (
       SELECT extract(epoch FROM completed_at - started_at)::float8 AS s FROM (
         SELECT model_id, status, started_at, completed_at FROM generations
         WHERE account_id = $1 AND started_at IS NOT NULL ORDER BY started_at DESC LIMIT $3
       ) latest WHERE model_id = $2 AND status = 'succeeded' AND completed_at IS NOT NULL
       ORDER BY started_at DESC LIMIT $4
     ) sample`,
    [accountId, modelId, ESTIMATE_SCAN, ESTIMATE_SAMPLE],
  );
  const s = rows[0]?.seconds;
  return typeof s === 'number' && Number.isFinite(s) ? s : null;
}
