// Secrets never leave (docs/api.md "Abuse limits", "Secrets"): a `${env:NAME}` value is removed from a
// model server's answer before the answer is cut to length; clients get one sentence of a JSON error,
// never a page; URL userinfo is stripped wherever a URL is shown (catalog check, health errors that
// /readyz prints); a catalog url with credentials is refused by `catalog check` without printing them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { describeBody } from '../../../src/backends/shared/http.ts';
import { Secrets } from '../../../src/backends/secrets.ts';
import { redacting } from '../../../src/backends/redacting.ts';
import { RenderError, type RenderContext } from '../../../src/backends/types.ts';
import { BackendHealth } from '../../../src/backends/health.ts';
import { Metrics } from '../../../src/metrics/metrics.ts';
import { checkCatalogFile } from '../../../src/cli/catalog.ts';
import { stripUserinfo } from '../../../src/domain/scrub.ts';

const KEY = 'sk-live-0123456789abcdefghijklmnopqrstuvwxyz';
const secrets = () => {
  const s = new Secrets({ RG_T_KEY: KEY });
  s.resolve('${env:RG_T_KEY}');
  return s;
};
/** No run of 6 characters of the key appears in the text (a half-cut key is still a leak). */
const leaks = (text: string) =>
  Array.from({ length: KEY.length - 5 }, (_, i) => KEY.slice(i, i + 6)).some((p) =>
    text.includes(p),
  );

describe('backend answers', () => {
  it('a key standing across the cut is redacted before the cut, wherever it stands', async () => {
    const s = secrets();
    for (const at of [0, 150, 190, 199, 290, 299, 5000]) {
      const detail = `${'a'.repeat(at)}${KEY} trailing words`;
      const res = new Response(JSON.stringify({ detail }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
      const text = await describeBody(res, (t) => s.redact(t));
      expect(leaks(text), `key at ${at}: ${text}`).toBe(false);
      expect(text.length).toBeLessThanOrEqual(200);
    }
  });

  it('one sentence of a JSON error; a page or a dump is never shown', async () => {
    const s = secrets();
    const json = new Response(
      JSON.stringify({ error: `Bad token ${KEY}. Stack: at x (/srv/app.py:12)` }),
      { status: 401 },
    );
    expect(await describeBody(json, (t) => s.redact(t))).toBe('Bad token [secret].');
    const page = new Response(`<html><body>Internal error ${KEY}</body></html>`, {
      status: 500,
      headers: { 'content-type': 'text/html' },
    });
    expect(await describeBody(page, (t) => s.redact(t))).toBe('');
  });

  it("redact also takes the key percent-encoded and every URL's userinfo", () => {
    const s = new Secrets({ RG_T_PW: 'p@ss/word:1' });
    s.resolve('${env:RG_T_PW}');
    const text = s.redact(
      `failed: http://admin:${encodeURIComponent('p@ss/word:1')}@10.0.0.5:8080/predictions and p@ss/word:1`,
    );
    expect(text).toBe('failed: http://10.0.0.5:8080/predictions and [secret]');
    expect(stripUserinfo('see https://u:p@host.example/x, or ws://a@b/c')).toBe(
      'see https://host.example/x, or ws://b/c',
    );
  });
});

describe('shown addresses', () => {
  it('catalog check refuses a url with credentials and prints neither them nor the secret', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-secrets-'));
    const file = path.join(dir, 'c.yaml');
    fs.writeFileSync(
      file,
      stringify({
        models: [
          {
            id: 't/a',
            name: 'a',
            kind: 'text',
            description: 'x',
            output: { type: 'text' },
            fields: [{ name: 'text', type: 'text', required: true, maxLength: 10 }],
            price: '1',
            backend: { driver: 'cog', url: 'http://user:${env:RG_T_KEY}@127.0.0.1:9' },
            timeLimitSeconds: 10,
            maxAttempts: 1,
          },
        ],
      }),
    );
    let out = '';
    expect(
      checkCatalogFile(file, { RG_T_KEY: KEY }, (t) => {
        out += t;
      }),
    ).toBe(1);
    expect(out).toContain('must not carry a user name or password');
    expect(out).not.toContain('user:');
    expect(out).not.toContain('RG_T_KEY');
    expect(leaks(out)).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a health probe's error that quotes its address is shown without userinfo or secret (what /readyz prints)", async () => {
    const s = secrets();
    const url = `http://user:${KEY}@127.0.0.1:9`;
    // Node's fetch refuses credentials in a URL with a message that quotes the whole URL
    const health = new BackendHealth(
      [
        {
          driver: 'cog',
          url,
          probe: async (u) => {
            await fetch(u);
          },
        },
      ],
      new Metrics(),
      60_000,
      () => {},
      (t) => s.redact(t),
    );
    await health.checkAll();
    const [snap] = health.snapshot();
    expect(snap.healthy).toBe(false);
    expect(JSON.stringify(snap)).not.toContain('user');
    expect(leaks(JSON.stringify(snap))).toBe(false);
  });
});

describe('what a backend sends (redacting.ts, around every backend the registry hands out)', () => {
  const ctx = (o: Partial<RenderContext> = {}): RenderContext => ({
    signal: new AbortController().signal,
    progress: () => {},
    get workDir(): string {
      throw new Error('a text render never asks for its scratch directory');
    },
    timeLimitSeconds: 10,
    attemptId: 'gen_x-1',
    readUpload: () => Promise.resolve(null),
    ...o,
  });

  it("an answer and its pieces lose the key; the context's getters are not read", async () => {
    const pieces: string[] = [];
    const backend = redacting(
      {
        run: (_inputs, c) => {
          for (const p of ['key: ', KEY.slice(0, 10), KEY.slice(10), ' ok']) c.textPiece?.(p);
          c.progress(0.5);
          return Promise.resolve({ kind: 'text', text: `key: ${KEY} ok` });
        },
      },
      secrets(),
    );
    const got: number[] = [];
    const out = await backend.run(
      {},
      ctx({ textPiece: (p) => pieces.push(p), progress: (f) => got.push(f) }),
    );
    expect(out).toEqual({ kind: 'text', text: 'key: [secret] ok' });
    expect(pieces.join('')).toBe('key: [secret] ok');
    expect(got).toEqual([0.5]);
  });

  it('an error, its stack and cause lose the key; a RenderError keeps code and retry', async () => {
    const cause = new Error(`connect to http://x:${KEY}@h failed`);
    const backend = redacting(
      {
        run: () =>
          Promise.reject(new RenderError('BACKEND_UNAVAILABLE', `no ${KEY}`, true, { cause })),
      },
      secrets(),
    );
    const e = (await backend.run({}, ctx()).catch((x: unknown) => x)) as RenderError;
    expect(e).toBeInstanceOf(RenderError);
    expect([e.code, e.retryable, e.message]).toEqual(['BACKEND_UNAVAILABLE', true, 'no [secret]']);
    expect(leaks(String(e.stack)) || leaks(String((e.cause as Error).stack))).toBe(false);
    expect((e.cause as Error).message).toBe('connect to http://h failed');
  });
});
