// The statements that call rendergate_create_generations (sql/create_generations.sql): the charge
// and the test record of a batch of creates, one row per item with its outcome.
import type { Queryable } from '../db/pool.ts';
import { QUEUE_POSITION_CAP } from '../db/generations.ts';

type Row = Record<string, unknown>;

// Each created render's place among its model's waiting renders, in the same statement: the
// renders waiting besides this batch's, counted once per model after the charge
// (src/db/sql/queue_ahead.sql: in a snapshot taken then, which sees a batch of the same account
// this one waited for); the batcher adds the batch's own earlier ones, in id order.
const CREATE_BATCH = `
WITH made AS MATERIALIZED (SELECT * FROM rendergate_create_generations($1, $2)),
  ahead AS (
    SELECT f.model_id, rendergate_queue_ahead(f.model_id, f.mine, ${QUEUE_POSITION_CAP - 1}) AS n
    FROM (SELECT ($3::text[])[m.idx + 1] AS model_id, count(*)::int AS mine
          FROM made m WHERE m.outcome = 'created' GROUP BY 1) f)
SELECT m.idx, m.outcome, m.generation_id, m.inputs, m.created_at,
  CASE WHEN m.outcome = 'created' THEN a.n + 1 END AS queue_position
FROM made m LEFT JOIN ahead a ON a.model_id = ($3::text[])[m.idx + 1]`;

/**
 * One call of rendergate_create_generations: charges (or records, for a test key), enqueues and
 * records the idempotency key of each item (a JSON array, see the function), one row per item.
 */
export async function createGenerations<T extends object>(
  q: Queryable,
  itemsJson: string,
  timeZone: string,
  modelIds: string[],
): Promise<T[]> {
  const { rows } = await q.query<T & Row>({
    name: 'gen-create-batch',
    text: CREATE_BATCH,
    values: [itemsJson, timeZone, modelIds],
  });
  return rows;
}

// A create with a chat request's messages (migrations/016): the generation and its messages in one
// statement, so they exist as soon as the render can be claimed (the foreign key is checked at the
// statement's end, when the generation exists).
const CREATE_WITH_MESSAGES = `
WITH c AS (${CREATE_BATCH}),
  m AS (INSERT INTO generation_messages (generation_id, messages, response_format)
        SELECT generation_id, $4::jsonb, $5::jsonb FROM c
        WHERE outcome IN ('created', 'created_final')
        ON CONFLICT DO NOTHING)
SELECT * FROM c`;

/**
 * createGenerations() of one item, with its chat messages (a JSON array) and output format (a JSON
 * object or null, migrations/034) stored beside it.
 */
export async function createGenerationWithMessages<T extends object>(
  q: Queryable,
  itemsJson: string,
  timeZone: string,
  modelIds: string[],
  messagesJson: string,
  responseFormatJson: string | null = null,
): Promise<T[]> {
  const { rows } = await q.query<T & Row>({
    name: 'gen-create-chat',
    text: CREATE_WITH_MESSAGES,
    values: [itemsJson, timeZone, modelIds, messagesJson, responseFormatJson],
  });
  return rows;
}
