// The operator's command line as an operator runs it (bin/rendergate.mjs, its own process): help and
// mistakes start nothing and exit 0 / 2; accounts are named by id or email; with RENDERGATE_URL every
// operator command works from an empty directory through the admin API of a running server; links
// carry the public URL the server itself recorded.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { serviceFixture } from '../../helpers/fixture.ts';
import { ADMIN, freePort } from '../../helpers/service.ts';

const BIN = path.resolve(import.meta.dirname, '../../../bin/rendergate.mjs');
// Each test spawns the CLI many times (a second or two each, more on a loaded machine).
const SPAWNS_TIMEOUT = 300_000;
const f = serviceFixture({ env: { RENDERGATE_WORKER_CONCURRENCY: '1' } });

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in `cwd` with only the variables given (and PATH/HOME): nothing from this shell. */
function cli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Run> {
  const cwd = opts.cwd ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rg-cli-'));
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...opts.env };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const remote = () => ({ RENDERGATE_URL: f.svc.base, RENDERGATE_ADMIN_TOKEN: ADMIN });
const email = () => `cli-${Math.random().toString(36).slice(2)}@example.test`;

describe('help and usage', () => {
  it(
    '--help starts nothing: no data dir, the port stays free for whoever holds it, exit 0',
    { timeout: SPAWNS_TIMEOUT },
    async () => {
      const port = await freePort();
      // Holding the port: a start would fail to listen (and exit non-zero) after creating its data dir.
      const holder = net.createServer().listen(port, '127.0.0.1');
      await new Promise((r) => holder.once('listening', r));
      try {
        for (const args of [
          ['--help'],
          ['-h'],
          ['serve', '--help'],
          ['help'],
          ['help', 'keys', 'create'],
          ['accounts', '--help'],
          ['keys', 'create', '--help'],
          ['worker', '-h'],
        ]) {
          const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-help-'));
          const r = await cli(args, { cwd, env: { PORT: String(port) } });
          expect(r.code, args.join(' ')).toBe(0);
          expect(r.stdout, args.join(' ')).toMatch(/^usage: rendergate/);
          expect(r.stderr).toBe('');
          expect(fs.readdirSync(cwd), args.join(' ')).toEqual([]);
        }
      } finally {
        holder.close();
      }
    },
  );

  it(
    'an unknown command or flag, a missing flag or argument: usage on stderr, exit 2',
    { timeout: SPAWNS_TIMEOUT },
    async () => {
      const cases: [string[], RegExp][] = [
        [['bogus'], /unknown command "bogus"/],
        [['--bogus'], /unknown flag "--bogus"/],
        [['serve', '--port', '1'], /Unknown option '--port'/],
        [['accounts'], /"accounts" needs a command word/],
        [['accounts', 'frobnicate'], /unknown command "accounts frobnicate"/],
        [['accounts', 'find'], /missing argument/],
        [['keys', 'revoke', 'extra'], /unexpected argument "extra"/],
        [['accounts', 'create', '--email'], /argument missing/],
        [['credits', 'add', '--account', 'a@b.test'], /--amount is required/],
        [['credits', 'add', '--account', 'a@b.test', '--amount=-5'], /whole number/],
        [
          ['keys', 'create', '--account', 'a@b.test', '--mode', 'fake'],
          /--mode must be live or test/,
        ],
        [['completion', 'fish'], /bash or zsh/],
      ];
      for (const [args, message] of cases) {
        const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-bad-'));
        const r = await cli(args, { cwd, env: remote() });
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stdout, args.join(' ')).toBe('');
        expect(r.stderr, args.join(' ')).toMatch(message);
        expect(r.stderr, args.join(' ')).toMatch(/usage: rendergate/);
        expect(fs.readdirSync(cwd)).toEqual([]);
      }
    },
  );

  it('prints a bash completion script that bash accepts', async () => {
    const r = await cli(['completion', 'bash']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('complete -o default -F _rendergate rendergate');
    const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rg-comp-')), 'c.sh');
    fs.writeFileSync(
      script,
      r.stdout +
        '\nCOMP_WORDS=(rendergate accounts l); COMP_CWORD=2; _rendergate; echo "${COMPREPLY[@]}"\n',
    );
    const { stdout: out } = await promisify(execFile)('bash', [script]);
    expect(out.trim()).toBe('list');
  });
});

describe('against a running server (RENDERGATE_URL) from an empty directory', () => {
  it(
    'creates, finds and lists accounts, credits and keys by email, revokes, refunds, makes links',
    { timeout: SPAWNS_TIMEOUT },
    async () => {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-remote-'));
      const json = async (...args: string[]) => {
        const r = await cli(args, { cwd, env: remote() });
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        return JSON.parse(r.stdout);
      };
      const mail = email();
      const acct = await json('accounts', 'create', '--email', mail, '--name', 'Remote');
      expect(acct).toMatchObject({ email: mail, name: 'Remote', balanceCents: 0 });
      expect(
        (await json('accounts', 'find', mail.slice(0, 12))).data.map((a: { id: string }) => a.id),
      ).toEqual([acct.id]);
      expect((await json('accounts', 'find', acct.id)).data[0].email).toBe(mail);
      const listed = await json('accounts', 'list', '--limit', '1');
      expect(listed.data).toHaveLength(1);

      expect(
        await json('credits', 'add', '--account', mail.toUpperCase(), '--amount', '250'),
      ).toMatchObject({ balanceCents: 250 });
      expect(await json('credits', 'add', '--account', acct.id, '--amount', '50')).toMatchObject({
        balanceCents: 300,
      });
      const key = await json(
        'keys',
        'create',
        '--account',
        mail,
        '--name',
        'cli',
        '--daily-cap',
        'none',
      );
      expect(key.key).toMatch(/^rg_live_/);
      expect((await f.api.call('GET', '/v1/me', { key: key.key })).status).toBe(200);

      const made = await f.api.call('POST', '/v1/generations', {
        key: key.key,
        body: { modelId: 'rendergate/shot-list', inputs: { text: 'Refund me.' } },
        headers: { 'idempotency-key': 'cli-1' },
      });
      expect(made.status).toBe(202);
      expect((await f.api.waitFinal(key.key, made.json.id)).status).toBe('succeeded');
      expect(await json('generations', 'refund', '--id', made.json.id)).toMatchObject({
        id: made.json.id,
      });
      expect(await json('keys', 'revoke', '--key', key.id)).toMatchObject({ id: key.id });
      expect((await f.api.call('GET', '/v1/me', { key: key.key })).status).toBe(401);

      const invite = await json('accounts', 'invite', '--email', email());
      expect(invite.link.startsWith(`${f.svc.base}/invite/`)).toBe(true);
      const reset = await json('accounts', 'reset-link', '--email', mail);
      expect(reset.link.startsWith(`${f.svc.base}/reset/`)).toBe(true);
      expect(fs.readdirSync(cwd)).toEqual([]);
    },
  );

  it(
    "answers the server's refusals with exit 1 and the error code; a wrong token or address too",
    { timeout: SPAWNS_TIMEOUT },
    async () => {
      const missing = await cli(
        ['credits', 'add', '--account', 'nobody@example.test', '--amount', '1'],
        { env: remote() },
      );
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stderr).code).toBe('ACCOUNT_NOT_FOUND');
      const token = await cli(['accounts', 'list'], {
        env: { ...remote(), RENDERGATE_ADMIN_TOKEN: 'not-the-admin-token-at-all' },
      });
      expect(token.code).toBe(1);
      expect(JSON.parse(token.stderr).code).toBe('ADMIN_TOKEN_INVALID');
      const noToken = await cli(['accounts', 'list'], { env: { RENDERGATE_URL: f.svc.base } });
      expect(noToken.code).toBe(1);
      expect(noToken.stderr).toMatch(/RENDERGATE_ADMIN_TOKEN must be too/);
      const port = await freePort();
      const away = await cli(['accounts', 'list'], {
        env: { ...remote(), RENDERGATE_URL: `http://127.0.0.1:${port}` },
      });
      expect(away.code).toBe(1);
      expect(away.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1/);
    },
  );
});

describe('RENDERGATE_URL is checked before the admin token goes anywhere', () => {
  /** A listener that records what reaches it and answers as the admin API would, or redirects. */
  async function listener(answer: (res: http.ServerResponse) => void) {
    const seen: { url: string; auth: string | undefined }[] = [];
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization });
      answer(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    return { seen, port, close: () => new Promise((r) => server.close(r)) };
  }
  const page = (res: http.ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"nextCursor":null}');

  it(
    'credentials in it and plain http:// to another machine are refused in one line, exit 2, ' +
      'unless --insecure; no message shows the credentials; a redirect is not followed',
    { timeout: SPAWNS_TIMEOUT },
    async () => {
      const admin = await listener(page);
      const PASSWORD = 'hunter2-Secret-pw';
      try {
        const env = (url: string) => ({ RENDERGATE_URL: url, RENDERGATE_ADMIN_TOKEN: ADMIN });
        const refused = async (url: string, args: string[], message: RegExp) => {
          const r = await cli(args, { env: env(url) });
          expect(r.code, `${url}: ${r.stderr}`).toBe(2);
          expect(r.stdout).toBe('');
          expect(r.stderr).toMatch(message);
          expect(r.stderr.trim().split('\n')).toHaveLength(1);
          expect(r.stderr).not.toContain(PASSWORD);
          expect(r.stderr).not.toContain('admin:');
          return r;
        };
        const port = admin.port;
        await refused(
          `https://admin:${PASSWORD}@rendergate.example.com`,
          ['accounts', 'list'],
          /must not carry a user name or password/,
        );
        await refused(
          `http://admin:${PASSWORD}@127.0.0.1:${port}`,
          ['accounts', 'list'],
          /"http:\/\/127\.0\.0\.1:\d+\/"/,
        );
        await refused(
          `htp//admin:${PASSWORD}@host`,
          ['keys', 'revoke', '--key', 'k'],
          /not an absolute http\(s\) URL/,
        );
        // 0.0.0.0 is not loopback by its name (Linux connects it to this machine all the same).
        const plain = await refused(`http://0.0.0.0:${port}`, ['accounts', 'list'], /--insecure/);
        expect(plain.stderr).toMatch(
          /^rendergate: RENDERGATE_URL="http:\/\/0\.0\.0\.0:\d+\/" is plain http/,
        );
        expect(admin.seen).toEqual([]);
        // Told so, before the command or after it, the token goes.
        for (const args of [
          ['--insecure', 'accounts', 'list'],
          ['accounts', 'list', '--insecure'],
        ]) {
          const ok = await cli(args, { env: env(`http://0.0.0.0:${port}`) });
          expect(ok.code, ok.stderr).toBe(0);
          expect(JSON.parse(ok.stdout)).toEqual({ data: [], nextCursor: null });
        }
        // This machine by name needs nothing.
        const local = await cli(['accounts', 'list'], { env: env(`http://localhost:${port}/`) });
        expect(local.code, local.stderr).toBe(0);
        expect(admin.seen.map((x) => x.auth)).toEqual(Array(3).fill(`Bearer ${ADMIN}`));
        expect(admin.seen[0].url).toBe('/admin/v1/accounts');
        const elsewhere = await listener((res) =>
          res.writeHead(307, { location: `http://127.0.0.1:${port}/admin/v1/accounts` }).end(),
        );
        try {
          const moved = await cli(['accounts', 'list'], {
            env: env(`http://127.0.0.1:${elsewhere.port}`),
          });
          expect(moved.code).toBe(1);
          expect(moved.stderr).toMatch(
            /HTTP 307, a redirect to http:\/\/127\.0\.0\.1:\d+\/admin\/v1\/accounts, not followed/,
          );
          expect(admin.seen).toHaveLength(3);
        } finally {
          await elsewhere.close();
        }
      } finally {
        await admin.close();
      }
    },
  );

  it('--insecure is in the help and the completion script', async () => {
    const help = await cli(['--help']);
    expect(help.stdout).toMatch(/^ {2}--insecure {4}with RENDERGATE_URL, allow plain http:\/\//m);
    const one = await cli(['keys', 'create', '--help']);
    expect(one.stdout).toMatch(/--insecure allows http:\/\/ to another/);
    const script = (await cli(['completion', 'bash'])).stdout;
    const keysCreate = '--help --account --name --mode --daily-cap --rate-limit --insecure';
    expect(script).toContain(`"keys create") flags="${keysCreate}" ;;`);
    expect(script).toMatch(/compgen -W "[^"]* --insecure" -- "\$cur"\)\); return/);
  });
});

describe('on the local installation (DATABASE_URL)', () => {
  it(
    'prints links with the public URL the server recorded, not one made from this shell',
    { timeout: SPAWNS_TIMEOUT },
    async () => {
      const r = await cli(['accounts', 'invite', '--email', email()], {
        env: { DATABASE_URL: f.dbh.url, PORT: '1' },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).link.startsWith(`${f.svc.base}/invite/`)).toBe(true);
      const mail = email();
      const made = JSON.parse(
        (await cli(['accounts', 'create', '--email', mail], { env: { DATABASE_URL: f.dbh.url } }))
          .stdout,
      );
      const credit = await cli(['credits', 'add', '--account', mail, '--amount', '7'], {
        env: { DATABASE_URL: f.dbh.url },
      });
      expect(credit.code, credit.stderr).toBe(0);
      expect((await f.api.admin('GET', `/accounts/${made.id}`)).balanceCents).toBe(7);
    },
  );
});

describe('GET /admin/v1/openapi.json', () => {
  it('is valid OpenAPI 3.1, public like /v1/openapi.json, and the answers the CLI reads match it', async () => {
    expect((await fetch(`${f.svc.base}/admin/v1/openapi.json`)).status).toBe(200);
    const doc = await f.api.admin('GET', '/openapi.json');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    const ajv = new Ajv2020({ strict: false });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(doc, 'admin');
    const check = (schema: string, value: unknown) => {
      const ok = ajv.validate({ $ref: `admin#/components/schemas/${schema}` }, value);
      expect(ok, `${schema}: ${JSON.stringify(ajv.errors)}`).toBe(true);
    };
    const mail = email();
    check('Account', await f.api.admin('POST', '/accounts', { email: mail }));
    check('AccountList', await f.api.admin('GET', `/accounts?email=${encodeURIComponent(mail)}`));
    check('AccountList', await f.api.admin('GET', '/accounts?query=cli-&limit=2'));
    check('Link', await f.api.admin('POST', '/invites', { email: email() }));
    check('Link', await f.api.admin('POST', '/reset-links', { email: mail }));
    check('Server', await f.api.admin('GET', '/server'));
    expect((await f.api.admin('GET', '/server')).publicUrl).toBe(f.svc.base);
  });
});
