// One embedded PostgreSQL for the benchmark run (the product's own embedded.ts), in a temporary
// directory, with a fresh database per scenario.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.ts';

export interface StatementStat {
  calls: number;
  totalMs: number;
  pct: number;
  meanExecMs: number;
  meanPlanMs: number;
  walBytesPerCall: number;
  query: string;
}

export class BenchPostgres {
  private constructor(
    private dir: string,
    private pgHandle: EmbeddedPostgres,
  ) {}

  /** `dir` must be traversable by the `postgres` user when running as root (see run.ts). */
  static async start(dir: string): Promise<BenchPostgres> {
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    return new BenchPostgres(dir, await startEmbeddedPostgres(dir));
  }

  /** The maintenance database's URL. */
  get url(): string {
    return this.pgHandle.url;
  }

  urlOf(db: string): string {
    return this.url.replace(/\/postgres$/, `/${db}`);
  }

  async query<T = Record<string, unknown>>(
    sql: string,
    params: unknown[] = [],
    db = 'postgres',
  ): Promise<T[]> {
    const c = new pg.Client({ connectionString: this.urlOf(db) });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows as T[];
    } finally {
      await c.end();
    }
  }

  /** A new empty database (the service migrates it at start); returns its URL. */
  async createDatabase(name: string): Promise<string> {
    await this.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await this.query(`CREATE DATABASE ${name}`);
    return this.urlOf(name);
  }

  async dropDatabase(name: string): Promise<void> {
    await this.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }

  /**
   * Server settings that need a restart, e.g. track_commit_timestamp (so pg_xact_commit_timestamp(xmin)
   * tells when a row's transaction committed) or shared_preload_libraries. The server comes back on a
   * new port: read `url` again afterwards.
   */
  async configure(settings: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(settings)) {
      if (!/^[a-z_.]+$/.test(name)) throw new Error(`bad setting name ${name}`);
      await this.query(`ALTER SYSTEM SET ${name} = '${value.replace(/'/g, "''")}'`);
    }
    await this.pgHandle.stop();
    this.pgHandle = await startEmbeddedPostgres(this.dir);
    for (const [name, value] of Object.entries(settings)) {
      const [row] = await this.query<{ v: string }>(`SELECT current_setting($1) AS v`, [name]);
      if (row.v !== value) throw new Error(`${name} is ${row.v}, not ${value}`);
    }
  }

  /** --profile: per-statement timings (pg_stat_statements, which ships with the embedded binaries). */
  static readonly STATEMENT_STATS = {
    shared_preload_libraries: 'pg_stat_statements',
    'pg_stat_statements.track_planning': 'on',
  };

  private statsReady = false;

  async resetStatementStats(): Promise<boolean> {
    try {
      if (!this.statsReady) {
        await this.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
        this.statsReady = true;
      }
      await this.query('SELECT pg_stat_statements_reset()');
      return true;
    } catch {
      return false; // not preloaded: no statement figures
    }
  }

  /** The statements of the scenario databases that took the most time since the last reset. */
  async topStatements(limit = 10): Promise<StatementStat[]> {
    const rows = await this.query<{
      calls: string;
      total_ms: number;
      mean_exec_time: number;
      mean_plan: number;
      wal_bytes: string;
      query: string;
      pct: number;
    }>(
      `WITH s AS (
         SELECT s.calls, s.total_exec_time + s.total_plan_time AS total_ms, s.mean_exec_time, s.total_plan_time / greatest(s.calls, 1) AS mean_plan,
                s.wal_bytes, regexp_replace(s.query, '\\s+', ' ', 'g') AS query
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname <> 'postgres')
       SELECT *, 100 * total_ms / nullif(sum(total_ms) OVER (), 0) AS pct FROM s ORDER BY total_ms DESC LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({
      calls: Number(r.calls),
      totalMs: Math.round(r.total_ms),
      pct: Math.round(r.pct * 10) / 10,
      meanExecMs: Math.round(r.mean_exec_time * 1000) / 1000,
      meanPlanMs: Math.round(r.mean_plan * 1000) / 1000,
      walBytesPerCall: Math.round(Number(r.wal_bytes) / Math.max(1, Number(r.calls))),
      query: String(r.query).slice(0, 160),
    }));
  }

  async stop(): Promise<void> {
    await this.pgHandle.stop();
  }

  get dataDir(): string {
    return path.join(this.dir, 'postgres');
  }
}
