// Waking workers after a create (src/queue/job-wake.ts), on a real database: this process's worker is
// woken in-process, before any NOTIFY, and the NOTIFY that wakes every other worker carries this
// process's tag, which only this process's worker takes as its own; the worker is told which job was
// queued (it may claim that one alone: claim.ts claimAlone). The claim hands a chat render its
// conversation with the job (no read of its own before the render starts).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JOBS_CHANNEL } from '../../../src/db/channels.ts';
import type { Db } from '../../../src/db/pool.ts';
import { Claimer } from '../../../src/queue/claim.ts';
import { JobWake } from '../../../src/queue/job-wake.ts';
import { counting } from '../../helpers/counting-db.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { waitFor } from '../../helpers/wait.ts';

let db: Db;
let url: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ db, url, drop } = await freshDatabase());
  await db.query(`INSERT INTO accounts (id, email) VALUES ('acct_w', 'w@example.test')`);
});
afterAll(async () => {
  await drop?.();
});

it("wakes this process's worker at once, and every other one by a NOTIFY only this process calls its own", async () => {
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  const heard: string[] = [];
  other.on('notification', (n) => heard.push(n.payload ?? ''));
  await other.query(`LISTEN ${JOBS_CHANNEL}`);
  try {
    const wake = new JobWake(db);
    const elsewhere = new JobWake(db);
    expect(wake.isOwn(wake.tag)).toBe(false); // no worker here: nothing was woken in-process
    let fills = 0;
    let told: unknown;
    wake.attach((job) => {
      fills++;
      told = job;
    });
    wake.send('created', { id: 'gen_queued1', modelId: 'm/text' });
    expect(fills).toBe(1); // before the NOTIFY went anywhere
    expect(told).toEqual({ id: 'gen_queued1', modelId: 'm/text' }); // the job, to claim alone
    const payload = await waitFor('the NOTIFY', () => heard[0]);
    expect(payload).toBe(wake.tag);
    expect(wake.isOwn(payload)).toBe(true);
    elsewhere.attach(() => {});
    expect(elsewhere.isOwn(payload)).toBe(false); // another process's worker claims for it
    for (const p of ['created', 'handback', elsewhere.tag]) expect(wake.isOwn(p)).toBe(false);
  } finally {
    await other.end();
  }
});

it("announces a job to the other workers only when this process's worker did not claim it", async () => {
  const { db: counted, names: sent } = counting(db);
  const wake = new JobWake(counted);
  const answers = new Map<string, (claimed: boolean) => void>();
  wake.attach((job) => new Promise<boolean>((resolve) => answers.set(job!.id, resolve)));
  wake.send('created', { id: 'gen_taken01', modelId: 'm/text' });
  wake.send('created', { id: 'gen_left001', modelId: 'm/text' });
  expect(sent).toEqual([]); // nothing before the worker has answered
  answers.get('gen_taken01')!(true);
  await waitFor('the answer heard', () => wake.skipped === 1);
  expect(sent).toEqual([]); // claimed here: no statement at all
  answers.get('gen_left001')!(false);
  await waitFor('the NOTIFY sent', () => sent.length === 1);
  expect(sent).toEqual(['notify-rendergate_jobs']);
  // A worker that cannot say (no job given, or a plain fill) is announced at once, as before.
  const plain = new JobWake(counted);
  plain.attach(() => {});
  plain.send('created', { id: 'gen_plain01', modelId: 'm/text' });
  expect(sent).toEqual(['notify-rendergate_jobs', 'notify-rendergate_jobs']);
});

it('claims a chat render with its conversation, and any other render without one', async () => {
  const messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'A fox.' },
  ];
  for (const id of ['gen_chat01', 'gen_plain1']) {
    await db.query(
      `INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at)
       VALUES ($1, 'acct_w', 'm/text', '{}', 0, now() + interval '1 hour')`,
      [id],
    );
  }
  await db.query(`INSERT INTO generation_messages (generation_id, messages) VALUES ($1, $2)`, [
    'gen_chat01',
    JSON.stringify(messages),
  ]);
  const claimer = new Claimer({ db, limits: new Map(), owner: 'w1', leaseSeconds: 15 });
  const jobs = await claimer.claim(4);
  expect(Object.fromEntries(jobs.map((j) => [j.id, j.messages]))).toEqual({
    gen_chat01: messages,
    gen_plain1: null,
  });
  // The claim of one job under its model's lock (a limited model) returns it too.
  await db.query(
    `INSERT INTO generations (id, account_id, model_id, inputs, cost_cents, deadline_at)
     VALUES ('gen_chat02', 'acct_w', 'm/limited', '{}', 0, now() + interval '1 hour')`,
  );
  await db.query(`INSERT INTO generation_messages (generation_id, messages) VALUES ($1, $2)`, [
    'gen_chat02',
    JSON.stringify(messages),
  ]);
  const limited = new Claimer({
    db,
    limits: new Map([['m/limited', 1]]),
    owner: 'w2',
    leaseSeconds: 15,
  });
  expect((await limited.next())?.messages).toEqual(messages);
});
