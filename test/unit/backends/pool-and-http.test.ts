// Pure pieces of the backends: the order of a pool's servers for a tie, Retry-After, data-URL results.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { poolCapacity, serverPreference } from '../../../src/queue/pool-claim.ts';
import { retryAfter } from '../../../src/backends/shared/http.ts';
import { saveOutput } from '../../../src/backends/shared/output.ts';
import { displayUrl } from '../../../src/backends/health.ts';

describe('pool servers', () => {
  const pool = (down: string[] = [], per = 2) => ({
    urls: ['http://a', 'http://b', 'http://c'],
    concurrencyPerUrl: per,
    healthy: (u: string) => !down.includes(u),
  });
  // Which server a claim gives a job is the claim's statement (db/sql/claim_limited.sql), tested
  // against the database in test/integration/queue/claim.test.ts; the order of its ties is ours.
  it('orders healthy servers for a tie: never served first, then the least recently served', () => {
    expect(serverPreference(pool())).toEqual(['http://a', 'http://b', 'http://c']);
    expect(serverPreference(pool(['http://b']))).toEqual(['http://a', 'http://c']);
    expect(serverPreference(pool(), new Map([['http://a', 0]]))).toEqual([
      'http://b',
      'http://c',
      'http://a',
    ]);
  });
  it('capacity counts healthy servers only', () => {
    expect(poolCapacity(pool())).toBe(6);
    expect(poolCapacity(pool(['http://a']))).toBe(4);
    expect(poolCapacity(pool(['http://a', 'http://b', 'http://c']))).toBe(0);
  });
});

describe('http helpers', () => {
  it('reads Retry-After as seconds or a date', () => {
    expect(retryAfter('7')).toBe(7);
    expect(retryAfter(null)).toBeUndefined();
    expect(retryAfter('soon')).toBeUndefined();
    expect(retryAfter(new Date(Date.now() + 3_000).toUTCString())).toBeGreaterThanOrEqual(2);
  });
  it('never shows the password of a server address', () => {
    expect(displayUrl('http://user:hunter2@gpu-1:5000/')).toBe('http://gpu-1:5000');
  });
});

describe('data-URL results', () => {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-out-'));
  const o = {
    workDir,
    contentType: 'video/mp4',
    limitBytes: 1000,
    signal: new AbortController().signal,
    timeoutMs: 1000,
    redact: (t: string) => t,
    what: 'test',
    origin: null,
    allowPrivate: false,
  };
  it('writes the bytes of a base64 data URL of the right type', async () => {
    const bytes = Buffer.from('0123456789');
    const out = await saveOutput(`data:video/mp4;base64,${bytes.toString('base64')}`, o);
    expect(fs.readFileSync(out.path)).toEqual(bytes);
  });
  it('refuses another type, an oversized one, and a malformed one', async () => {
    await expect(saveOutput('data:image/png;base64,AAAA', o)).rejects.toMatchObject({
      code: 'OUTPUT_WRONG_TYPE',
      retryable: false,
    });
    await expect(
      saveOutput(`data:video/mp4;base64,${Buffer.alloc(2000).toString('base64')}`, o),
    ).rejects.toMatchObject({ code: 'OUTPUT_TOO_LARGE' });
    await expect(saveOutput('data:video/mp4', o)).rejects.toMatchObject({
      code: 'BACKEND_BAD_RESPONSE',
    });
    await expect(saveOutput('ftp://x/y.mp4', o)).rejects.toMatchObject({
      code: 'BACKEND_BAD_RESPONSE',
    });
  });
});
