// Notifications sent after a commit rather than inside the transaction. A NOTIFY makes its transaction
// take a cluster-wide lock held until its commit is flushed, so transactions that notify commit one WAL
// flush at a time, and wait for each other (measured here: 1,626 vs 3,181 single-insert transactions a
// second at 16 connections). Two uses:
//   - waking workers after a create (the job is committed; a wake lost to a crash between the commit and
//     the NOTIFY costs a worker's poll interval, one second, never the job);
//   - telling API processes that a claim set a generation's startedAt (a lost one leaves a cached poll
//     showing startedAt null until the render's next change, which the trigger of migrations/005 sends).
// Sent on a connection with asynchronous commit, at most one statement in flight per notifier: payloads
// asked for meanwhile are collected (duplicates once) and go together in the next one.
import type { Db } from './pool.ts';

export class AfterCommitNotifier {
  private sending = false;
  private pending = new Set<string>();

  constructor(
    private db: Db,
    private channel: string,
  ) {}

  send(payload: string): void {
    this.pending.add(payload);
    if (!this.sending) this.flush();
  }

  private flush(): void {
    const payloads = [...this.pending];
    this.pending.clear();
    this.sending = true;
    this.db
      .query({
        name: `notify-${this.channel}`,
        text: 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p',
        values: [this.channel, payloads],
      })
      .catch(() => {
        /* the database is away: see above for what a lost notification costs */
      })
      .finally(() => {
        this.sending = false;
        if (this.pending.size > 0) this.flush();
      });
  }
}
