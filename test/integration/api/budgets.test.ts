// Budgets (docs/billing.md "Budgets"): counted by the ledger's charge in its own transaction, so a
// budget is never exceeded by one cent however many creates race for it across API processes;
// refunds give back; the refusal order is balance (402), the key's cap, then budgets (409
// BUDGET_EXCEEDED, one detail per budget exceeded); bad input is a 400 that writes nothing.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serviceFixture } from '../../helpers/fixture.ts';
import { ADMIN, client, startTestService } from '../../helpers/service.ts';
import { checkInvariants } from '../../helpers/invariants.ts';

const f = serviceFixture({ role: 'api' });
const TEXT = {
  modelId: 'rendergate/shot-list',
  inputs: { text: 'A gull lands. The tide turns. Night falls on the harbour.' },
};

type Api = ReturnType<typeof client>;
const create = (api: Api, key: string) =>
  api.call('POST', '/v1/generations', {
    key,
    body: TEXT,
    headers: { 'idempotency-key': crypto.randomUUID() },
  });

async function cost(): Promise<number> {
  const probe = await f.api.account(0);
  return (await f.api.call('POST', '/v1/quote', { key: probe.key, body: TEXT })).json.costCents;
}

const charged = async (accountId: string) =>
  (
    await f.dbh.db.query<{ n: number }>(
      `SELECT coalesce(sum(CASE kind WHEN 'charge' THEN amount_cents ELSE -amount_cents END), 0)::int
         AS n FROM ledger_entries WHERE account_id = $1 AND kind IN ('charge', 'refund')`,
      [accountId],
    )
  ).rows[0].n;

describe('a budget under 100 concurrent creates over two API processes', () => {
  it('is never exceeded by one cent, equals the ledger, and refunds give it back', async () => {
    const c = await cost();
    // a limit that is not a multiple of the price: 13 creates fit, with cents to spare
    const limit = c * 13 + Math.floor(c / 2);
    const a = await f.api.account(1_000_000);
    await f.api.admin('PUT', `/accounts/${a.accountId}/budgets/month`, { limitCents: limit });
    await f.api.admin('PUT', `/keys/${a.keyId}/budgets/day`, { limitCents: 1_000_000 });
    const second = await startTestService(f.dbh.url, { role: 'api' });
    try {
      const apis = [f.api, client(second.base)];
      const rs = await Promise.all(
        Array.from({ length: 100 }, (_, i) => create(apis[i % 2], a.key)),
      );
      expect(rs.filter((r) => r.status !== 202 && r.status !== 409).map((r) => r.text)).toEqual([]);
      const ok = rs.filter((r) => r.status === 202);
      expect(ok).toHaveLength(13);
      const refused = rs.filter((r) => r.status === 409);
      expect(new Set(refused.map((r) => r.json.code))).toEqual(new Set(['BUDGET_EXCEEDED']));
      expect(refused[0].json.details).toEqual([
        {
          scope: 'account',
          id: a.accountId,
          period: 'month',
          limitCents: limit,
          spentCents: c * 13,
          costCents: c,
          resetsAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      ]);
      const listed = await f.api.admin('GET', `/accounts/${a.accountId}/budgets`);
      expect(listed.data).toEqual([
        { period: 'month', limitCents: limit, spentCents: c * 13, resetsAt: expect.any(String) },
      ]);
      expect(await charged(a.accountId)).toBe(c * 13);
      await checkInvariants(f.dbh.db);

      // Cancelling 3 queued renders refunds them: their price goes back to the budget, and
      // exactly 3 more creates fit.
      for (const r of ok.slice(0, 3)) {
        const d = await f.api.call('DELETE', `/v1/generations/${r.json.id}`, { key: a.key });
        expect(d.status).toBeLessThan(300);
      }
      const me = await f.api.call('GET', '/v1/me', { key: a.key });
      expect(me.json.budgets.account[0].spentCents).toBe(c * 10);
      expect(me.json.budgets.key[0]).toMatchObject({ period: 'day', spentCents: c * 10 });
      const more = await Promise.all(
        Array.from({ length: 20 }, (_, i) => create(apis[i % 2], a.key)),
      );
      expect(more.filter((r) => r.status === 202)).toHaveLength(3);
      expect(await charged(a.accountId)).toBe(c * 13);
      await checkInvariants(f.dbh.db);
    } finally {
      await second.stop();
    }
  });
});

describe('budgets of the account, the member and the key', () => {
  it('refuses in the contract order: balance, then the cap, then every budget exceeded', async () => {
    const c = await cost();
    const poor = await f.api.account(c - 1);
    await f.api.admin('PUT', `/accounts/${poor.accountId}/budgets/day`, { limitCents: 0 });
    expect((await create(f.api, poor.key)).json.code).toBe('INSUFFICIENT_BALANCE');

    const capped = await f.api.account(c * 10, { dailyCapCents: c - 1 });
    await f.api.admin('PUT', `/keys/${capped.keyId}/budgets/week`, { limitCents: 0 });
    expect((await create(f.api, capped.key)).json.code).toBe('API_KEY_DAILY_CAP');

    const both = await f.api.account(c * 10);
    await f.api.admin('PUT', `/accounts/${both.accountId}/budgets/total`, { limitCents: c - 1 });
    await f.api.admin('PUT', `/keys/${both.keyId}/budgets/day`, { limitCents: c });
    await f.api.admin('PUT', `/keys/${both.keyId}/budgets/week`, { limitCents: 0 });
    const r = await create(f.api, both.key);
    expect([r.status, r.json.code]).toEqual([409, 'BUDGET_EXCEEDED']);
    expect(r.json.details.map((d: any) => [d.scope, d.period, d.resetsAt === null])).toEqual([
      ['account', 'total', true],
      ['key', 'week', false],
    ]);
    await checkInvariants(f.dbh.db);
  });

  it('gives back the budgets it counted when the cap or the balance then refuses', async () => {
    // Past a period's first charge, a charge far from its limits counts its budgets at once,
    // before the cap and the balance (create_generations.sql's fast path): a refusal after that
    // must leave every budget as it was.
    const c = await cost();
    const a = await f.api.account(c * 3, { dailyCapCents: c * 2 });
    await f.api.admin('PUT', `/accounts/${a.accountId}/budgets/month`, { limitCents: c * 100 });
    await f.api.admin('PUT', `/keys/${a.keyId}/budgets/day`, { limitCents: c * 100 });
    const usage = async () =>
      (
        await f.dbh.db.query(
          `SELECT scope, period, spent_cents::int AS spent, alerted_80, alerted_100
             FROM budget_usage WHERE account_id = $1 ORDER BY scope, period`,
          [a.accountId],
        )
      ).rows;
    expect((await create(f.api, a.key)).status).toBe(202);
    expect((await create(f.api, a.key)).status).toBe(202);
    const counted = await usage();
    expect(counted.map((u) => [u.scope, u.period, u.spent])).toEqual([
      ['account', 'month', 2 * c],
      ['key', 'day', 2 * c],
    ]);
    // the key's cap reached by this price, then a key whose cap is below any price
    expect((await create(f.api, a.key)).json.code).toBe('API_KEY_DAILY_CAP');
    expect(await usage()).toEqual(counted);
    const low = await f.api.admin('POST', `/accounts/${a.accountId}/keys`, {
      name: 'low',
      dailyCapCents: c - 1,
    });
    expect((await create(f.api, low.key as string)).json.code).toBe('API_KEY_DAILY_CAP');
    expect(await usage()).toEqual(counted);
    // another key takes what the balance has left, then the balance refuses
    const other = (await f.api.admin('POST', `/accounts/${a.accountId}/keys`, { name: 'o' })).key;
    expect((await create(f.api, other as string)).status).toBe(202);
    const after = await usage();
    expect(after.map((u) => u.spent)).toEqual([3 * c, 2 * c]);
    expect((await create(f.api, other as string)).json.code).toBe('INSUFFICIENT_BALANCE');
    expect(await usage()).toEqual(after);
    await checkInvariants(f.dbh.db);
  });

  it("counts a member's studio renders and their keys' renders, and a test key's in its own", async () => {
    const c = await cost();
    const a = await f.api.account(c * 100);
    // a person who is a member and created a live key and a test key of the account
    const person = `usr_${crypto.randomUUID().replaceAll('-', '')}`;
    await f.dbh.db.query('INSERT INTO people (id, email) VALUES ($1, $2)', [
      person,
      `${person}@example.test`,
    ]);
    await f.dbh.db.query(
      "INSERT INTO memberships (account_id, person_id, role) VALUES ($1, $2, 'developer')",
      [a.accountId, person],
    );
    const test = await f.api.admin('POST', `/accounts/${a.accountId}/keys`, { mode: 'test' });
    await f.dbh.db.query('UPDATE api_keys SET created_by = $2 WHERE id = ANY($1)', [
      [a.keyId, test.id],
      person,
    ]);
    const base = `/accounts/${a.accountId}/members/${person}/budgets`;
    await f.api.admin('PUT', `${base}/week`, { limitCents: c * 2 });
    await f.api.admin('PUT', `/keys/${test.id}/budgets/day`, { limitCents: c });
    // the member's budget counts the key they created: 2 fit
    const rs = await Promise.all(Array.from({ length: 5 }, () => create(f.api, a.key)));
    expect(rs.map((r) => r.status).sort()).toEqual([202, 202, 409, 409, 409]);
    expect(rs.find((r) => r.status === 409)!.json.details[0]).toMatchObject({
      scope: 'member',
      id: person,
      period: 'week',
    });
    // a test key's render counts in its own budget only, never the member's
    const t = await Promise.all(Array.from({ length: 3 }, () => create(f.api, test.key)));
    expect(t.map((r) => r.status).sort()).toEqual([202, 409, 409]);
    expect(t.find((r) => r.status === 409)!.json.details[0].scope).toBe('key');
    expect((await f.api.admin('GET', `${base}`)).data[0].spentCents).toBe(c * 2);
    // removing the budget lets renders through again
    await f.api.admin('DELETE', `${base}/week`);
    expect((await create(f.api, a.key)).status).toBe(202);
    await checkInvariants(f.dbh.db);
  });

  it('a budget set mid-period starts from what was already spent in it', async () => {
    const c = await cost();
    const a = await f.api.account(c * 100);
    for (let i = 0; i < 3; i++) expect((await create(f.api, a.key)).status).toBe(202);
    await f.api.admin('PUT', `/keys/${a.keyId}/budgets/day`, { limitCents: c * 4 });
    const listed = await f.api.admin('GET', `/keys/${a.keyId}/budgets`);
    expect(listed.data[0]).toMatchObject({ period: 'day', limitCents: c * 4, spentCents: c * 3 });
    const rs = await Promise.all(Array.from({ length: 4 }, () => create(f.api, a.key)));
    expect(rs.filter((r) => r.status === 202)).toHaveLength(1);
    await checkInvariants(f.dbh.db);
  });
});

describe('bad input writes nothing', () => {
  it('a limit of -1 or 10^15, a period that does not exist, a missing or odd body: 400', async () => {
    const a = await f.api.account(100);
    const put = (period: string, body: unknown) =>
      f.api.call('PUT', `/admin/v1/accounts/${a.accountId}/budgets/${period}`, {
        headers: { authorization: `Bearer ${ADMIN}` },
        body,
      });
    for (const [period, body] of [
      ['day', { limitCents: -1 }],
      ['day', { limitCents: 10 ** 15 }],
      ['day', { limitCents: 1.5 }],
      ['day', { limitCents: '5' }],
      ['day', {}],
      ['day', { limitCents: 5, extra: 1 }],
      ['year', { limitCents: 5 }],
      ['DAY', { limitCents: 5 }],
    ] as const) {
      const r = await put(period, body);
      expect([period, body, r.status, r.json.code]).toEqual([period, body, 400, 'INVALID_INPUT']);
    }
    expect((await f.api.admin('GET', `/accounts/${a.accountId}/budgets`)).data).toEqual([]);
    const unknown = await f.api.call('PUT', '/admin/v1/keys/key_nope/budgets/day', {
      headers: { authorization: `Bearer ${ADMIN}` },
      body: { limitCents: 5 },
    });
    expect(unknown.status).toBe(404);
    const none = await f.api.call('DELETE', `/admin/v1/accounts/${a.accountId}/budgets/day`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect([none.status, none.json.code]).toEqual([404, 'NOT_FOUND']);
    const { rows } = await f.dbh.db.query(
      "SELECT count(*)::int AS n FROM audit_events WHERE account_id = $1 AND action = 'budget.changed'",
      [a.accountId],
    );
    expect(rows[0].n).toBe(0);
  });

  it('a low-balance alert above the balance, negative or not a number: 400', async () => {
    const a = await f.api.account(500);
    const patch = (body: unknown) =>
      f.api.call('PATCH', `/admin/v1/accounts/${a.accountId}`, {
        headers: { authorization: `Bearer ${ADMIN}` },
        body,
      });
    for (const body of [
      { lowBalanceCents: 501 },
      { lowBalanceCents: -1 },
      { lowBalanceCents: 'x' },
      {},
    ])
      expect((await patch(body)).status).toBe(400);
    expect((await f.api.admin('GET', `/accounts/${a.accountId}`)).lowBalanceCents).toBeNull();
    const ok = await patch({ lowBalanceCents: 500 });
    expect([ok.status, ok.json.lowBalanceCents]).toEqual([200, 500]);
    expect((await patch({ lowBalanceCents: null })).json.lowBalanceCents).toBeNull();
  });
});

describe('every path that charges', () => {
  it('/openai/v1 and MCP are refused by a budget as /v1 is', async () => {
    const a = await f.api.account(10_000);
    await f.api.admin('PUT', `/accounts/${a.accountId}/budgets/day`, { limitCents: 0 });
    const chat = await f.api.call('POST', '/openai/v1/chat/completions', {
      key: a.key,
      body: { model: TEXT.modelId, messages: [{ role: 'user', content: TEXT.inputs.text }] },
    });
    expect([chat.status, chat.json.error.code]).toEqual([409, 'BUDGET_EXCEEDED']);
    const transport = new StreamableHTTPClientTransport(new URL(`${f.svc.base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${a.key}` } },
    });
    const mcp = new Client({ name: 'rendergate-test', version: '1.0.0' });
    await mcp.connect(transport);
    const r = (await mcp.callTool({
      name: 'create_generation',
      arguments: { modelId: TEXT.modelId, inputs: TEXT.inputs },
    })) as any;
    expect([r.isError, r.structuredContent.code]).toEqual([true, 'BUDGET_EXCEEDED']);
    await mcp.close();
    const { rows } = await f.dbh.db.query('SELECT 1 FROM generations WHERE account_id = $1', [
      a.accountId,
    ]);
    expect(rows).toEqual([]);
  });
});

describe('the admin document', () => {
  it('describes the budget and alert answers as they are', async () => {
    const doc = await f.api.admin('GET', '/openapi.json');
    const ajv = new Ajv2020({ strict: false });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(doc, 'admin');
    const check = (schema: string, value: unknown) => {
      const ok = ajv.validate({ $ref: `admin#/components/schemas/${schema}` }, value);
      expect(ok, `${schema}: ${JSON.stringify(ajv.errors)}`).toBe(true);
    };
    const a = await f.api.account(1_000);
    check(
      'BudgetList',
      await f.api.admin('PUT', `/keys/${a.keyId}/budgets/total`, { limitCents: 9 }),
    );
    check('BudgetList', await f.api.admin('GET', `/keys/${a.keyId}/budgets`));
    check('BudgetList', await f.api.admin('DELETE', `/keys/${a.keyId}/budgets/total`));
    check(
      'Account',
      await f.api.admin('PATCH', `/accounts/${a.accountId}`, { lowBalanceCents: 5 }),
    );
  });
});
