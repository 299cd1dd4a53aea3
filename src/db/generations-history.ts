// Reads of the studio's History: an account's generations with where each came from (the name of the
// key that made it; a render of the studio has no key), filtered by model and status.
import type { Queryable } from './pool.ts';
import { GENERATION_COLUMNS, QUEUE_POSITION } from './generations.ts';

const SELECT = `${GENERATION_COLUMNS.split(',')
  .map((c) => `g.${c.trim()}`)
  .join(', ')}, ${QUEUE_POSITION('g')}`;

export type KeyOfRow = { key_id: string | null; key_name: string | null; key_start: string | null };

/** Status filter: `running` is a queued render that has started, `queued` one that waits to. */
const STATUS = `CASE $3::text WHEN 'queued' THEN g.status = 'queued' AND g.started_at IS NULL
  WHEN 'running' THEN g.status = 'queued' AND g.started_at IS NOT NULL ELSE g.status = $3 END`;

/** Rows of `R`: the generation's columns (as the generation view reads them) and its key's name. */
export async function historyRows<R>(
  db: Queryable,
  accountId: string,
  q: { limit: number; afterId: string | null; status: string | null; modelId: string | null },
): Promise<(R & KeyOfRow)[]> {
  const { rows } = await db.query({
    name: 'studio-history',
    text: `SELECT ${SELECT}, g.key_id, k.name AS key_name, k.start AS key_start
     FROM generations g LEFT JOIN api_keys k ON k.id = g.key_id
     WHERE g.account_id = $1 AND g.deleted_at IS NULL AND ($2::text IS NULL OR g.id < $2)
       AND ($3::text IS NULL OR ${STATUS}) AND ($4::text IS NULL OR g.model_id = $4)
     ORDER BY g.id DESC LIMIT $5`,
    values: [accountId, q.afterId, q.status, q.modelId, q.limit],
  });
  return rows as (R & KeyOfRow)[];
}

/** Where one generation of the account came from; null when there is no such generation. */
export async function generationSource(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<KeyOfRow | null> {
  const { rows } = await db.query<KeyOfRow>(
    `SELECT g.key_id, k.name AS key_name, k.start AS key_start FROM generations g LEFT JOIN api_keys k ON k.id = g.key_id
     WHERE g.id = $1 AND g.account_id = $2`,
    [id, accountId],
  );
  return rows[0] ?? null;
}
