// Shared pieces of the hostile-input properties: a running service with a funded account, the
// contract's error-body check, a raw-socket client for requests fetch refuses to send, and the
// fast-check settings (fixed seed, bounded runs; the seed and the shrunk counterexample are printed on
// failure, and HOSTILE_SEED / HOSTILE_RUNS override them to replay or to dig deeper).
import net from 'node:net';
import fc from 'fast-check';
import { expect } from 'vitest';
import { ERROR_STATUS } from '../../../src/domain/errors.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { ADMIN, client, startTestService, type TestService } from '../../helpers/service.ts';

export { ADMIN };
export const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_121);
const RUNS_SCALE = Number(process.env.HOSTILE_RUNS_SCALE ?? 1);

// HOSTILE_STATS=1 prints, per property, how many answers of each status it saw ("none": no answer).
const stats = new Map<string, Map<string, number>>();
let current = '';
export function record(status: number | 'none'): void {
  const m = stats.get(current) ?? new Map<string, number>();
  m.set(String(status), (m.get(String(status)) ?? 0) + 1);
  stats.set(current, m);
}

/** Runs an async property with the fixed seed; a failure names the seed, the path and the input. */
export async function check<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  body: (v: T) => Promise<void>,
  numRuns = 200,
): Promise<void> {
  current = name;
  stats.delete(name);
  const out = await fc.check(fc.asyncProperty(arb, body), {
    seed: SEED,
    numRuns: Math.max(1, Math.round(numRuns * RUNS_SCALE)),
    endOnFailure: true,
  });
  if (process.env.HOSTILE_STATS) {
    const seen = [...(stats.get(name) ?? new Map()).entries()]
      .sort()
      .map(([k, v]) => `${k}×${v}`)
      .join(' ');
    process.stdout.write(`[hostile] ${name}: ${out.numRuns} runs; answers ${seen}\n`);
  }
  if (out.failed) {
    const full = fc.stringify(out.counterexample);
    const shown =
      full.length > 1500
        ? `${full.slice(0, 1000)} …(${full.length} chars)… ${full.slice(-300)}`
        : full;
    const why =
      out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
    throw new Error(
      `property "${name}" failed (seed ${out.seed}, path "${out.counterexamplePath}", after ${out.numRuns} runs)\n` +
        `counterexample: ${shown}\n${why.slice(0, 4000)}`,
    );
  }
}

// --- the service ----------------------------------------------------------------------------------

export interface Hostile {
  svc: TestService;
  dbh: Awaited<ReturnType<typeof freshDatabase>>;
  api: ReturnType<typeof client>;
  port: number;
  key: string;
  keyId: string;
  accountId: string;
  stop: () => Promise<void>;
}

/** The API and admin API without workers (nothing renders: a created generation stays queued). */
export async function startHostile(cents = 1_000_000): Promise<Hostile> {
  const dbh = await freshDatabase();
  const svc = await startTestService(dbh.url, { role: 'api' });
  const api = client(svc.base);
  const a = await api.account(cents, { rateLimitPerMinute: 1_000_000 });
  return {
    svc,
    dbh,
    api,
    port: Number(new URL(svc.base).port),
    ...a,
    stop: async () => {
      await svc.stop();
      await dbh.drop();
    },
  };
}

// --- what every answer must look like ---------------------------------------------------------------

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** The closed list of the API's error codes. */
export const CODES = new Set(Object.keys(ERROR_STATUS));
const ERROR_KEYS = new Set(['code', 'message', 'requestId', 'details']);
/** Internals that must never reach a client (unless the client sent that very text). */
const LEAKS: RegExp[] = [
  /\n\s+at /,
  /\bat [\w.<>]+ \(/,
  /\.(?:ts|js|mjs|cjs):\d+/,
  /\/src\//,
  /node_modules/,
  /\bSELECT\b/i,
  /\bINSERT\b/i,
  /\brelation\b/i,
  /syntax error/i,
  /Error:/,
  /\bFST_/,
  /\bHPE_/,
  /ERR_/,
];
/** HTTP-level limits outside the JSON model; their body still has the contract's shape. */
const TRANSPORT_STATUS: Record<number, string> = {
  431: 'HEADERS_TOO_LARGE',
  408: 'REQUEST_TIMEOUT',
};

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Asserts one answer: an allowed status, never 5xx; an error body is exactly the contract's shape with
 * a code of the closed list matching the status, and carries no internals. `sent` is everything the
 * client sent, so text it chose to send (and we echo, e.g. an unknown field name) is not a leak.
 */
export function expectContract(
  a: Answer,
  allowed: readonly number[],
  sent: string,
  what: string,
): void {
  record(a.status);
  const ctx = `${what} -> ${a.status} ${a.text.slice(0, 600)}`;
  expect(a.status, ctx).toBeLessThan(500);
  expect(allowed, ctx).toContain(a.status);
  if (a.status >= 400) {
    expect(a.headers['content-type'] ?? '', ctx).toMatch(/^application\/json/);
    let body: any;
    try {
      body = JSON.parse(a.text);
    } catch {
      throw new Error(`error body is not JSON: ${ctx}`);
    }
    expect(body !== null && typeof body === 'object' && !Array.isArray(body), ctx).toBe(true);
    for (const k of Object.keys(body))
      expect(ERROR_KEYS.has(k), `unexpected key ${k}: ${ctx}`).toBe(true);
    expect(
      typeof body.code === 'string' && CODES.has(body.code),
      `code not in the closed list: ${ctx}`,
    ).toBe(true);
    const expectedCode = TRANSPORT_STATUS[a.status];
    if (expectedCode) expect(body.code, ctx).toBe(expectedCode);
    else
      expect(
        ERROR_STATUS[body.code as keyof typeof ERROR_STATUS],
        `code does not match status: ${ctx}`,
      ).toBe(a.status);
    expect(typeof body.message === 'string' && body.message.length > 0, ctx).toBe(true);
    expect(typeof body.requestId === 'string' && body.requestId.length > 0, ctx).toBe(true);
    if (a.headers['x-request-id'] !== undefined)
      expect(body.requestId, ctx).toBe(a.headers['x-request-id']);
    if (body.details !== undefined) expect(Array.isArray(body.details), ctx).toBe(true);
    // Whatever was sent, an error answer stays small: echoed names and values are bounded.
    expect(a.text.length, `error body of ${a.text.length} chars: ${ctx}`).toBeLessThan(32 * 1024);
    expectNoLeaks(a.text, sent, ctx);
  }
}

/**
 * Throws when `text` (an answer's body) carries internals, unless the client sent that very text
 * (`sent`, as sent or percent-decoded).
 */
export function expectNoLeaks(text: string, sent: string, ctx: string): void {
  const sentText = `${sent}\n${safeDecode(sent)}`;
  for (const re of LEAKS) {
    if (re.test(text) && !re.test(sentText))
      throw new Error(`internals (${re}) in the body: ${ctx}`);
  }
}

// --- allowed statuses per endpoint (docs/api.md) ------------------------------------------------------

// 400 covers a malformed request line or body; 413/415 a body of the wrong size or type; 404 an unknown route.
const BODY = [400, 413, 415];
export const STATUS = {
  healthz: [200],
  readyz: [200],
  metrics: [200],
  me: [200, 401, 429],
  models: [200, 401, 429],
  modelDetail: [200, 400, 401, 404, 429],
  quote: [200, 401, 429, ...BODY],
  create: [202, 401, 402, 409, 422, 429, ...BODY],
  list: [200, 400, 401, 429],
  get: [200, 400, 401, 404, 429],
  content: [200, 206, 304, 400, 401, 404, 409, 429],
  del: [200, 401, 404, 429, ...BODY],
  adminCreateAccount: [201, 401, ...BODY],
  adminGetAccount: [200, 400, 401, 404],
  adminCredits: [201, 401, 404, ...BODY],
  adminKeys: [201, 401, 404, ...BODY],
  adminRevoke: [200, 401, 404, ...BODY],
  adminLedger: [200, 400, 401, 404],
  adminRefund: [200, 401, 404, 409, ...BODY],
} as const;

// --- HTTP through fetch ----------------------------------------------------------------------------------

export interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export async function send(base: string, r: Sent): Promise<Answer> {
  const body = typeof r.body === 'string' || r.body === undefined ? r.body : new Uint8Array(r.body);
  const res = await fetch(base + r.path, { method: r.method, headers: r.headers, body });
  const text = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { status: res.status, headers, text };
}

/** Percent-encodes any string; lone surrogates (which encodeURIComponent refuses) become U+FFFD first. */
export const encode = (s: string) => encodeURIComponent(s.replace(/\p{Cs}/gu, '\ufffd'));

/** Statuses allowed for a request target of this length: a URL over 8 KiB is 400, over the header limit 431. */
export function forUrl(target: string, allowed: readonly number[]): readonly number[] {
  const bytes = Buffer.byteLength(target);
  return bytes > 16 * 1024 - 200 ? [400, 431] : bytes > 8 * 1024 ? [400] : allowed;
}

/** Sends through fetch and checks the answer against the contract. */
export async function sendChecked(
  base: string,
  r: Sent,
  allowed: readonly number[],
): Promise<Answer> {
  allowed = forUrl(new URL(base + r.path).pathname + new URL(base + r.path).search, allowed);
  const a = await send(base, r);
  const sent = `${r.path}\n${typeof r.body === 'string' ? r.body : (r.body?.toString('utf8') ?? '')}\n${Object.values(r.headers ?? {}).join('\n')}`;
  expectContract(a, allowed, sent, `${r.method} ${r.path.slice(0, 300)}`);
  return a;
}

// --- HTTP over a raw socket ---------------------------------------------------------------------------------

export interface RawAnswer extends Answer {
  raw: string;
}

/**
 * Writes bytes as they are to a fresh connection and reads one response. null when the server closed
 * the connection (or kept silent until `ms`) without answering, which is allowed only for a request
 * the client never finished sending.
 */
export function raw(
  port: number,
  bytes: Buffer | string,
  ms = 3000,
  endAfterWrite = false,
): Promise<RawAnswer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = net.connect(port, '127.0.0.1');
    let done = false;
    const finish = (v: RawAnswer | null) => {
      if (!done) {
        done = true;
        clearTimeout(t);
        sock.destroy();
        resolve(v);
      }
    };
    const t = setTimeout(() => finish(parseResponse(Buffer.concat(chunks), true)), ms);
    sock.on('connect', () => {
      sock.write(bytes);
      if (endAfterWrite) sock.end();
    });
    sock.on('data', (d) => {
      chunks.push(d);
      const r = parseResponse(Buffer.concat(chunks), false);
      if (r) finish(r);
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE')
        finish(parseResponse(Buffer.concat(chunks), true));
      else if (!done) {
        done = true;
        clearTimeout(t);
        reject(e);
      }
    });
    sock.on('close', () => finish(parseResponse(Buffer.concat(chunks), true)));
  });
}

/** One HTTP/1.1 response from the start of `buf`, or null while incomplete (or nothing at all once closed). */
function parseResponse(buf: Buffer, closed: boolean): RawAnswer | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) {
    if (closed && buf.length > 0)
      throw new Error(
        `truncated response: ${JSON.stringify(buf.toString('latin1').slice(0, 300))}`,
      );
    return null;
  }
  const head = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0]);
  if (!m) throw new Error(`not an HTTP response: ${JSON.stringify(head[0])}`);
  if (m[1].startsWith('1')) return parseResponse(buf.subarray(end + 4), closed); // 100 Continue: the answer follows
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    const k = line.slice(0, i).trim().toLowerCase();
    headers[k] =
      headers[k] === undefined
        ? line.slice(i + 1).trim()
        : `${headers[k]}, ${line.slice(i + 1).trim()}`;
  }
  let body = buf.subarray(end + 4);
  if (headers['transfer-encoding']?.includes('chunked')) {
    const out: Buffer[] = [];
    let p = 0;
    for (;;) {
      const nl = body.indexOf('\r\n', p);
      if (nl < 0) return closed ? finishRaw(m, headers, Buffer.concat(out), buf) : null;
      const n = parseInt(body.subarray(p, nl).toString('latin1'), 16);
      if (n === 0) return finishRaw(m, headers, Buffer.concat(out), buf);
      if (body.length < nl + 2 + n + 2)
        return closed ? finishRaw(m, headers, Buffer.concat(out), buf) : null;
      out.push(body.subarray(nl + 2, nl + 2 + n));
      p = nl + 2 + n + 2;
    }
  }
  if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (body.length < n) return closed ? finishRaw(m, headers, body, buf) : null;
    body = body.subarray(0, n);
    return finishRaw(m, headers, body, buf);
  }
  return closed ? finishRaw(m, headers, body, buf) : null;
}

function finishRaw(
  m: RegExpExecArray,
  headers: Record<string, string>,
  body: Buffer,
  all: Buffer,
): RawAnswer {
  return {
    status: Number(m[1]),
    headers,
    text: body.toString('utf8'),
    raw: all.toString('latin1'),
  };
}

/** Builds a request's bytes; `body` gets a Content-Length unless the headers already say how it is framed. */
export function request(
  method: string,
  target: string,
  headers: Array<[string, string | Buffer]>,
  body?: Buffer | string,
): Buffer {
  const parts: Buffer[] = [
    Buffer.from(
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`,
      'latin1',
    ),
  ];
  const framed = headers.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k));
  for (const [k, v] of headers)
    parts.push(
      Buffer.from(`${k}: `, 'latin1'),
      typeof v === 'string' ? Buffer.from(v, 'latin1') : v,
      Buffer.from('\r\n'),
    );
  const b =
    body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  if (b && !framed) parts.push(Buffer.from(`Content-Length: ${b.length}\r\n`));
  parts.push(Buffer.from('\r\n'));
  if (b) parts.push(b);
  return Buffer.concat(parts);
}

// --- generators ---------------------------------------------------------------------------------------------

const lone = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const oddChar = fc.constantFrom(
  '\u0000',
  '\u202e',
  '\u200f',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\u2028',
  '\u2029',
  '\uffff',
  '\ufffd',
  '😀',
  '👩‍👩‍👧',
  '🏳️‍🌈',
  'ﷺ',
  'ا',
  '\u0301',
  'İ',
  'ß',
  '\\',
  '"',
  "'",
  '\n',
  '\r',
  '\t',
  '\u007f',
  '\u0085',
  '%',
  '/',
  '.',
  '<',
  '>',
);

/** Strings with unicode oddities: lone surrogates, NUL, RTL and zero-width marks, emoji, controls. */
export const oddString = (maxLength = 40) =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc
      .array(fc.oneof(oddChar, lone, fc.string({ maxLength: 3 })), { maxLength })
      .map((a) => a.join('')),
  );

/** Numbers that break naive code: huge, tiny, negative zero, just past 2^53, fractions. */
export const oddNumber = fc.oneof(
  fc.constantFrom(
    1e308,
    -1e308,
    -0,
    0,
    2 ** 53 + 1,
    2 ** 53,
    -(2 ** 53) - 1,
    1e-320,
    5e-324,
    0.1,
    0.5,
    1.5,
    4.999999999999999,
    2147483648,
    -1,
    1,
    5,
    10,
    1e16,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Number literals as raw JSON text, including forms JSON.stringify never writes. */
export const oddNumberText = fc.constantFrom(
  '1e308',
  '1e309',
  '-1e309',
  '-0',
  '-0.0',
  '9007199254740993',
  '1e-320',
  '5e-324',
  '1E2',
  '1e+2',
  '0.0000000000000000000000000000001',
  '123456789012345678901234567890',
  '5.0',
  '10.00000000000000000001',
  '1e-400',
  '2.5e0',
);

/** Any JSON value, with odd strings, odd numbers and dangerous keys among them. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    oddNumber,
    oddString(),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(
      fc.oneof(
        oddString(12),
        fc.constantFrom('toString', 'valueOf', 'hasOwnProperty', 'prompt', 'duration', 'image', ''),
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** Ids and cursors that are not ids: traversal, NUL, quotes, SQL fragments, long, unicode. */
export const oddIdText = fc.oneof(
  fc.constantFrom(
    '..%2F',
    '..%2f..%2fetc%2fpasswd',
    '%00',
    'gen_%00',
    "'",
    '"',
    "' OR 1=1--",
    "1'; DROP TABLE accounts;--",
    'SELECT * FROM accounts',
    '%27%20OR%201%3D1--',
    '%E0%A4%A',
    '%',
    '%%',
    '%ZZ',
    '%C0%AE%C0%AE%2F',
    '..',
    '.',
    '~',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    'gen_00000000000000000000000000000000',
    'gen_0000000000000000000000000000000G',
    'GEN_0190a2b3c4d5e6f708192a3b4c5d6e7f',
    'acct_',
    'key_',
    '%F0%9F%98%80',
    '%E2%80%AE',
    '%ED%A0%80',
    '%C3%28',
    'x'.repeat(10_240),
    '%20',
    '+',
    '0',
    '-1',
    '1e308',
    '[]',
    '{}',
    '%0d%0aX-Injected:%201',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(encode),
  fc.string({ minLength: 1, maxLength: 300 }).map(encode),
  fc.integer({ min: 1, max: 12_000 }).map((n) => 'a'.repeat(n)),
);
