// PasswordWork (src/services/passwords.ts): argon2's hashes and checks run a few at a time per process,
// in the order they came; past MAX_WAITING waiting, a 503 with Retry-After, and room again once the
// queue moves. They run on threads of their own at a lower CPU priority, the process's other threads
// keeping theirs.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MAX_WAITING,
  PASSWORD_THREAD_NICE,
  PasswordWork,
} from '../../../src/services/passwords.ts';

/** The nice value of each thread of this process, by thread id (Linux: /proc/self/task/<tid>/stat). */
function niceByThread(): Map<string, number> {
  const m = new Map<string, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      m.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return m;
}

/** A piece of work that runs until released, and says when it started. */
function held(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return {
    release,
    work: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('PasswordWork', () => {
  it('runs at most `atOnce` at a time, the rest in the order they came', async () => {
    const log: string[] = [];
    const w = new PasswordWork(2);
    const jobs = ['a', 'b', 'c', 'd'].map((n) => held(log, n));
    const results = jobs.map((j) => w.run(j.work));
    await tick();
    expect(log).toEqual(['start a', 'start b']);
    expect([w.active, w.waiting]).toEqual([2, 2]);
    jobs[1].release();
    await tick();
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c']);
    jobs[0].release();
    jobs[2].release();
    jobs[3].release();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect([w.active, w.waiting]).toEqual([0, 0]);
  });

  it('refuses with 503 and Retry-After past the waiting bound, then takes work again', async () => {
    expect(MAX_WAITING).toBe(100);
    const log: string[] = [];
    const w = new PasswordWork(1, 3);
    const jobs = ['a', 'b', 'c', 'd'].map((n) => held(log, n));
    const results = jobs.map((j) => w.run(j.work));
    await tick();
    // one running, three waiting: the fifth is refused at once, and never runs
    const refused = await w.run(async () => 'never').catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      headers: { 'retry-after': '2' },
    });
    for (const j of jobs) j.release();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect(await w.run(async () => 'again')).toBe('again');
  });

  it('hashes and checks with argon2id, one at a time', async () => {
    const w = new PasswordWork(1);
    const digest = await w.hash('correct horse battery');
    expect(digest).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const [right, wrong, notADigest] = await Promise.all([
      w.verify(digest, 'correct horse battery'),
      w.verify(digest, 'wrong horse battery'),
      w.verify('not a digest', 'correct horse battery'),
    ]);
    expect([right, wrong, notADigest]).toEqual([true, false, false]);
    await w.close();
  });

  it('runs them on threads of its own, at most as many as it may run at once, each at a lower priority, ended by close', async () => {
    const before = niceByThread();
    const w = new PasswordWork(2);
    const digest = await w.hash('correct horse battery');
    await Promise.all([w.verify(digest, 'a wrong one'), w.verify(digest, 'another wrong one')]);
    const after = niceByThread();
    const lowered = [...after].filter(([tid, nice]) => !before.has(tid) && nice !== 0);
    expect(PASSWORD_THREAD_NICE).toBe(10);
    expect(lowered.length).toBeGreaterThanOrEqual(1);
    expect(lowered.length).toBeLessThanOrEqual(2);
    for (const [, nice] of lowered) expect(nice).toBe(PASSWORD_THREAD_NICE);
    // every thread that was here before keeps its priority, this one (the event loop's) too
    for (const [tid, nice] of before) if (after.has(tid)) expect(after.get(tid)).toBe(nice);
    await w.close();
    const closed = niceByThread();
    for (const [tid] of lowered) expect(closed.has(tid)).toBe(false);
  });
});
