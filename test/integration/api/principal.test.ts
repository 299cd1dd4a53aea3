// Who acts (domain/principal.ts), against the real database: each edge makes the right principal (a
// key's with its record, a session's with its row, the console's operator), and the services refuse
// what authorize's table refuses with 403 FORBIDDEN, changing nothing, under parallel requests too.
// Roles other than owner have no edge yet (teams will make them): their principals are handed to
// the services directly here, as an edge will.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../src/config.ts';
import { openInfra, type Infra } from '../../../src/cli/infra.ts';
import { Accounts } from '../../../src/services/accounts.ts';
import { ApiKeys } from '../../../src/services/keys.ts';
import { KeyResolver } from '../../../src/services/key-resolver.ts';
import { Generations } from '../../../src/services/generations.ts';
import { Ledger } from '../../../src/ledger/ledger.ts';
import { Sessions } from '../../../src/services/sessions.ts';
import { Uploads } from '../../../src/services/uploads.ts';
import { WebhookEndpoints } from '../../../src/services/webhook-endpoints.ts';
import { ApiError } from '../../../src/domain/errors.ts';
import { memberPrincipal, OPERATOR, type Role } from '../../../src/domain/principal.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { ADMIN } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';
import sharp from 'sharp';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let infra: Infra;
let config: Config;
let accounts: Accounts;
let keys: ApiKeys;
let resolver: KeyResolver;
let generations: Generations;
let uploads: Uploads;
let webhooks: WebhookEndpoints;

const RENDER = {
  modelId: 'rendergate/image-to-video',
  inputs: { prompt: 'A lighthouse at dusk', image: 'https://example.com/a.png' },
};

beforeAll(async () => {
  dbh = await freshDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-principal-'));
  config = loadConfig({
    DATABASE_URL: dbh.url,
    RENDERGATE_DATA_DIR: dataDir,
    RENDERGATE_ADMIN_TOKEN: ADMIN,
    RENDERGATE_PUBLIC_URL: 'http://127.0.0.1:9',
  });
  infra = await openInfra(config, pino({ level: 'silent' }));
  const { db, catalog, storage } = infra;
  accounts = new Accounts(db);
  resolver = new KeyResolver(db, config.keyPrefix);
  keys = new ApiKeys(db, config.keyPrefix, config.defaultRateLimitPerMinute, resolver);
  uploads = new Uploads(db, storage, config);
  webhooks = new WebhookEndpoints(db);
  const ledger = new Ledger(db, config.dayTimeZone);
  generations = new Generations({ db, catalog, config, storage, ledger, uploads });
});
afterAll(async () => {
  await infra?.close();
  await dbh?.drop();
});

/** A new account with `cents` of credit, made by the operator. */
async function account(cents = 10_000): Promise<string> {
  const a = await accounts.create(
    OPERATOR,
    `p-${Math.random().toString(36).slice(2)}@t.test`,
    null,
  );
  if (cents > 0) await accounts.credit(OPERATOR, a.id, cents, null);
  return a.id;
}

// the account's own person (migrations/030: `usr_` and the account's id), in any role
const member = (account: string, role: Role) =>
  memberPrincipal(account, `usr_${account.slice(5)}`, role);

async function refused(work: Promise<unknown>): Promise<string> {
  const e = await work.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  expect([(e as ApiError).code, (e as ApiError).status]).toEqual(['FORBIDDEN', 403]);
  return (e as ApiError).message;
}

const countOf = async (sql: string, values: unknown[]) =>
  (await dbh.db.query<{ n: number }>(sql, values)).rows[0].n;

describe('the edges make the principal', () => {
  it("a key's comes with its record, once: the cached lookup hands on the same object", async () => {
    const acct = await account(0);
    for (const mode of ['live', 'test'] as const) {
      const made = await keys.create(OPERATOR, acct, { mode, dailyCapCents: 700 });
      const record = await resolver.authenticate(`Bearer ${made.key}`);
      expect(record.principal).toEqual({
        kind: 'key',
        account: acct,
        keyId: made.id,
        mode,
        dailyCapCents: 700,
      });
      expect(resolver.cached(`Bearer ${made.key}`)!.principal).toBe(record.principal);
    }
  });

  it("a session's is its person's, with their role in the account; the console's the operator", async () => {
    const acct = await account(0);
    // migrations/030: every account has its email's person as owner, `usr_` and the account's id
    const personId = `usr_${acct.slice(5)}`;
    const sessions = new Sessions(dbh.db, { adminToken: ADMIN, perAccount: 10 });
    const signedIn = await sessions.find(
      await sessions.create({ personId, accountId: acct }),
      'account',
    );
    expect(signedIn!.principal).toEqual({ kind: 'member', account: acct, personId, role: 'owner' });
    const console = await sessions.find(await sessions.create(null), 'admin');
    expect(console!.principal).toBe(OPERATOR);
  });
});

describe('the services refuse what the table refuses, and change nothing', () => {
  it('renders: a viewer or billing member may not start, cancel or delete; an owner and a developer may', async () => {
    const acct = await account();
    const made = await generations.create(member(acct, 'developer'), RENDER, 'dev-1');
    const id = made.body.id as string;
    expect(await refused(generations.create(member(acct, 'viewer'), RENDER, 'v-1'))).toBe(
      'Your role (viewer) may not start renders: that needs an owner, admin or developer.',
    );
    await refused(generations.cancel(member(acct, 'billing'), id));
    await refused(generations.delete(member(acct, 'viewer'), id));
    // A viewer still sees the render, queued and charged once.
    const seen = JSON.parse(await generations.getJson(member(acct, 'viewer'), id)) as {
      status: string;
    };
    expect(seen.status).toBe('queued');
    expect(
      await countOf('SELECT count(*)::int AS n FROM generations WHERE account_id = $1', [acct]),
    ).toBe(1);
    expect((await generations.cancel(member(acct, 'owner'), id)).status).toBe('refunded');
    await checkInvariants(dbh.db);
  });

  it('keys: a developer may create but not revoke one it did not create; a key manages no keys', async () => {
    const acct = await account(0);
    const bounds = { maxRateLimitPerMinute: 6000, maxLiveKeys: 10 };
    const made = await keys.createOwn(member(acct, 'developer'), { name: 'dev' }, bounds);
    const otherDeveloper = memberPrincipal(acct, `usr_${'f'.repeat(32)}`, 'developer');
    expect(await refused(keys.revokeOwn(otherDeveloper, made.id))).toMatch(
      /only for a key you created/,
    );
    const key = await resolver.authenticate(`Bearer ${made.key}`);
    await refused(keys.createOwn(key.principal, { name: 'by a key' }, bounds));
    await refused(keys.createOwn(member(acct, 'billing'), { name: 'b' }, bounds));
    expect(
      await countOf(
        'SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL',
        [acct],
      ),
    ).toBe(1);
    expect(await keys.revokeOwn(member(acct, 'admin'), made.id)).toBe(true);
  });

  it('webhook endpoints and uploads: a billing member and a viewer may not; a developer may', async () => {
    const acct = await account(0);
    const body = { url: 'https://example.com/hook' };
    await refused(webhooks.create(member(acct, 'billing'), body));
    await refused(webhooks.list(member(acct, 'viewer'), { limit: 10, cursor: null }));
    const png = await sharp({
      create: { width: 8, height: 8, channels: 3, background: { r: 9, g: 9, b: 9 } },
    })
      .png()
      .toBuffer();
    await refused(uploads.create(member(acct, 'viewer'), 'image/png', png));
    expect(
      await countOf('SELECT count(*)::int AS n FROM uploads WHERE account_id = $1', [acct]),
    ).toBe(0);
    await webhooks.create(member(acct, 'developer'), body);
    const up = await uploads.create(member(acct, 'developer'), 'image/png', png);
    expect(
      (await uploads.list(member(acct, 'viewer'), { limit: 10, cursor: null })).data,
    ).toHaveLength(1);
    await refused(uploads.delete(member(acct, 'billing'), up.id));
  });

  it("the operator's acts: credit, refunds, other accounts; a member or key naming another account is refused", async () => {
    const [a, b] = [await account(500), await account(500)];
    await refused(accounts.credit(member(a, 'owner'), a, 1_000_000, 'free money'));
    await refused(generations.adminRefund(member(a, 'owner'), 'gen_0'));
    expect(await refused(accounts.ledger(member(a, 'owner'), 10, null, b))).toBe(
      'This member acts only for its own account.',
    );
    expect((await accounts.get(member(a, 'viewer'))).balanceCents).toBe(500);
    expect((await accounts.ledger(OPERATOR, 10, null, b)).data).toHaveLength(1);
    await checkInvariants(dbh.db);
  });

  it('parallel creates by every role: only those who may render are charged, each once', async () => {
    const acct = await account(100_000);
    const roles: Role[] = ['owner', 'admin', 'developer', 'billing', 'viewer'];
    const tries = Array.from({ length: 50 }, (_, i) => ({
      p: member(acct, roles[i % roles.length]),
      idem: `par-${i}`,
    }));
    const answers = await Promise.allSettled(
      tries.map((t) => generations.create(t.p, RENDER, t.idem)),
    );
    const made = answers.filter((r) => r.status === 'fulfilled').length;
    const forbidden = answers.filter(
      (r) => r.status === 'rejected' && (r.reason as ApiError).code === 'FORBIDDEN',
    ).length;
    expect([made, forbidden]).toEqual([30, 20]);
    expect(
      await countOf('SELECT count(*)::int AS n FROM generations WHERE account_id = $1', [acct]),
    ).toBe(30);
    const { rows } = await dbh.db.query<{ balance_cents: number; charged: string }>(
      `SELECT a.balance_cents, (SELECT coalesce(sum(amount_cents), 0) FROM ledger_entries
         WHERE account_id = a.id AND kind = 'charge') AS charged FROM accounts a WHERE a.id = $1`,
      [acct],
    );
    expect(rows[0].balance_cents + Number(rows[0].charged)).toBe(100_000);
    await checkInvariants(dbh.db);
  });
});
