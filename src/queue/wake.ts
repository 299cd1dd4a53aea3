// Wakes the workers after a create has committed. Not inside the create's transaction: a NOTIFY makes
// its transaction take a cluster-wide lock that is held until the commit is flushed, so creates that
// notify commit one fsync at a time (measured here: 1,626 vs 3,181 transactions/s at 16 connections).
// Sent after the commit instead, on a connection with asynchronous commit, at most one at a time per
// process: wakes asked for while one is on its way are folded into one more. A wake lost to a crash
// between the commit and the NOTIFY costs a worker's poll interval (one second), never the job.
import type { Db } from '../db/pool.ts';
import { JOBS_CHANNEL } from './channels.ts';

export class JobWaker {
  private sending = false;
  private again = false;

  constructor(private db: Db) {}

  wake(): void {
    if (this.sending) { this.again = true; return; }
    this.sending = true;
    this.db.query({ name: 'jobs-wake', text: 'SELECT pg_notify($1, $2)', values: [JOBS_CHANNEL, 'created'] })
      .catch(() => { /* the database is away: workers find the job by polling */ })
      .finally(() => {
        this.sending = false;
        if (this.again) { this.again = false; this.wake(); }
      });
  }
}
