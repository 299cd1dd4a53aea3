// Choosing the next render, fairly and within each model's cluster-wide concurrency.
//
// Fairness: the candidates are the oldest runnable job of each (account, model) pair with queued work,
// found with a loose index scan (cost grows with the number of pairs, not of jobs), ordered by how many
// renders the account already has running, then by when the account last had a render started. An
// account that floods the queue gets a slot only after every account with fewer running renders has
// had one, and, where running counts tie (a model limited to one render at a time, a single worker
// slot: everyone is at 0 whenever a slot frees), accounts take turns instead of queueing behind the
// flood's oldest job.
//
// Model concurrency: for a model with a `concurrency` limit, the claim takes a transaction-scoped
// advisory lock for that model, recounts its running renders and claims only below the limit, so the
// limit holds however many workers claim at once, on however many machines.
import type { Db } from '../db/pool.ts';

export interface ClaimedJob { id: string; model_id: string; inputs: Record<string, string | number | boolean>; attempts: number; waited: number }

const CANDIDATES = `
WITH RECURSIVE pairs AS (
  (SELECT account_id, model_id FROM generations WHERE status = 'queued' ORDER BY account_id, model_id LIMIT 1)
  UNION ALL
  SELECT n.account_id, n.model_id FROM pairs p, LATERAL (
    SELECT account_id, model_id FROM generations
    WHERE status = 'queued' AND (account_id, model_id) > (p.account_id, p.model_id)
    ORDER BY account_id, model_id LIMIT 1) n
), heads AS (
  SELECT h.* FROM pairs p, LATERAL (
    SELECT id, account_id, model_id, run_after FROM generations
    WHERE status = 'queued' AND account_id = p.account_id AND model_id = p.model_id
      AND run_after <= now() AND (lease_until IS NULL OR lease_until < now())
    ORDER BY run_after, id LIMIT 1) h
), busy AS (
  SELECT account_id, model_id, count(*) AS n FROM generations
  WHERE status = 'queued' AND lease_until IS NOT NULL AND lease_until >= now() GROUP BY account_id, model_id
)
SELECT h.id, h.model_id FROM heads h
WHERE (SELECT coalesce(sum(n), 0) FROM busy b WHERE b.model_id = h.model_id) < coalesce(($1::jsonb ->> h.model_id)::int, 2147483647)
ORDER BY (SELECT coalesce(sum(n), 0) FROM busy b WHERE b.account_id = h.account_id),
  (SELECT max(started_at) FROM generations s WHERE s.account_id = h.account_id AND s.started_at IS NOT NULL) NULLS FIRST,
  h.run_after, h.id
LIMIT 16`;

const CLAIM = `
UPDATE generations g SET attempts = g.attempts + 1, lease_owner = $2, lease_until = now() + make_interval(secs => $3),
  started_at = coalesce(g.started_at, clock_timestamp())
WHERE g.id = (SELECT id FROM generations WHERE id = $1 AND status = 'queued' AND run_after <= now()
                AND (lease_until IS NULL OR lease_until < now()) FOR UPDATE SKIP LOCKED)
RETURNING g.id, g.model_id, g.inputs, g.attempts, extract(epoch FROM now() - g.run_after)::float8 AS waited`;

export class Claimer {
  private limitsJson: string;

  constructor(private db: Db, private limits: Map<string, number>, private owner: string, private leaseSeconds: number) {
    this.limitsJson = JSON.stringify(Object.fromEntries(limits));
  }

  async next(): Promise<ClaimedJob | null> {
    const { rows } = await this.db.query({ name: 'claim-candidates', text: CANDIDATES, values: [this.limitsJson] });
    for (const c of rows as Array<{ id: string; model_id: string }>) {
      const job = this.limits.has(c.model_id) ? await this.claimLimited(c.id, c.model_id) : await this.claim(c.id);
      if (job) return job;
    }
    return null;
  }

  private async claim(id: string): Promise<ClaimedJob | null> {
    const { rows } = await this.db.query({ name: 'claim-one', text: CLAIM, values: [id, this.owner, this.leaseSeconds] });
    return (rows[0] as ClaimedJob | undefined) ?? null;
  }

  private async claimLimited(id: string, modelId: string): Promise<ClaimedJob | null> {
    const tx = await this.db.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`model:${modelId}`]);
      const { rows } = await tx.query(
        `SELECT count(*)::int AS n FROM generations WHERE model_id = $1 AND status = 'queued' AND lease_until IS NOT NULL AND lease_until >= now()`,
        [modelId]);
      let job: ClaimedJob | null = null;
      if (rows[0].n < this.limits.get(modelId)!) job = ((await tx.query(CLAIM, [id, this.owner, this.leaseSeconds])).rows[0] as ClaimedJob | undefined) ?? null;
      await tx.query('COMMIT');
      return job;
    } catch (e) {
      await tx.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      tx.release();
    }
  }
}
