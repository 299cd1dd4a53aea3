// The OpenAPI 3.1 document of the operator's API under /admin/v1 (served there, behind the admin
// token): what `rendergate` uses with RENDERGATE_URL, and what an operator's own tools can use.
import { VERSION } from '../../domain/version.ts';
import { ERROR_STATUS } from '../../domain/errors.ts';
import { auditPaths, auditSchemas } from './admin-audit.ts';
import { memberPaths, memberSchemas } from './admin-members.ts';
import { accountPatch, budgetAdminPaths, budgetAdminSchemas } from './admin-budgets.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: 'string' };
const int = { type: 'integer' };
const time = { type: 'string', format: 'date-time' };
const nullable = (s: Record<string, unknown>) => ({ ...s, type: [s.type as string, 'null'] });
const obj = (required: string[], properties: Record<string, unknown>) => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});
const json = (name: string) => ({ 'application/json': { schema: ref(name) } });
const body = (name: string) => ({ required: true, content: json(name) });
const ID = { name: 'id', in: 'path', required: true, schema: str };
const q = (name: string, schema: unknown = str) => ({ name, in: 'query', schema });

function op(
  id: string,
  summary: string,
  ok: string,
  okSchema: string,
  more: Record<string, unknown> = {},
  errors: number[] = [],
) {
  const responses: Record<string, unknown> = {
    [ok]: { description: summary, content: json(okSchema) },
  };
  for (const s of [400, 401, ...errors, 500, 503])
    responses[String(s)] = { $ref: '#/components/responses/Error' };
  return { operationId: id, summary, ...more, responses };
}

export function buildAdminOpenApiDocument(serverUrl: string) {
  const helpers = { op, body, ref, obj };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Rendergate admin API',
      version: VERSION,
      description: "The operator's API. Authenticate with `Authorization: Bearer <admin token>`.",
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: `${serverUrl}/admin/v1` }],
    security: [{ adminToken: [] }],
    paths: {
      '/openapi.json': {
        get: {
          operationId: 'getAdminOpenApi',
          summary: 'This document (no token needed; any origin may read it).',
          security: [],
          responses: {
            200: {
              description: 'This document.',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
      '/server': {
        get: op(
          'getServer',
          "The server's version and the public URL its links use.",
          '200',
          'Server',
        ),
      },
      '/accounts': {
        get: op(
          'listAccounts',
          'Accounts, newest first: all, one by exact email, or those matching a query.',
          '200',
          'AccountList',
          {
            parameters: [
              q('email'),
              q('query'),
              q('limit', { type: 'integer', minimum: 1, maximum: 100 }),
              q('cursor'),
            ],
          },
        ),
        post: op('createAccount', 'Create an account.', '201', 'Account', {
          requestBody: body('AccountCreate'),
        }),
      },
      '/accounts/{id}': {
        get: op('getAccount', 'One account.', '200', 'Account', { parameters: [ID] }, [404]),
        patch: accountPatch(helpers),
      },
      ...budgetAdminPaths(helpers),
      '/accounts/{id}/credits': {
        post: op(
          'addCredit',
          'Add credit.',
          '201',
          'Credit',
          { parameters: [ID], requestBody: body('CreditCreate') },
          [404],
        ),
      },
      '/accounts/{id}/keys': {
        post: op(
          'createKey',
          'Create an API key (the key is in this answer only).',
          '201',
          'NewKey',
          { parameters: [ID], requestBody: { required: false, content: json('KeyCreate') } },
          [404],
        ),
      },
      '/accounts/{id}/ledger': {
        get: op(
          'listLedger',
          "The account's ledger, newest first.",
          '200',
          'LedgerList',
          {
            parameters: [
              ID,
              q('limit', { type: 'integer', minimum: 1, maximum: 100 }),
              q('cursor'),
            ],
          },
          [404],
        ),
      },
      ...auditPaths(op),
      '/keys/{id}': {
        delete: op('revokeKey', 'Revoke a key.', '200', 'RevokedKey', { parameters: [ID] }, [404]),
      },
      '/generations/{id}/refund': {
        post: op(
          'refundGeneration',
          'Refund a generation.',
          '200',
          'Refunded',
          { parameters: [ID] },
          [404, 409],
        ),
      },
      '/invites': {
        post: op(
          'createInvite',
          'A one-time link to set a first password; creates the account if needed.',
          '201',
          'Link',
          { requestBody: body('LinkCreate') },
        ),
      },
      ...memberPaths(helpers),
      '/reset-links': {
        post: op(
          'createResetLink',
          'A one-time password reset link (1 hour).',
          '201',
          'Link',
          { requestBody: body('ResetCreate') },
          [404],
        ),
      },
    },
    components: {
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token.' },
      },
      responses: {
        Error: { description: 'An error (docs/api.md "Errors").', content: json('Error') },
      },
      schemas: {
        Error: obj(['code', 'message', 'requestId'], {
          // The one closed list (domain/errors.ts). The operator may do everything: its answers
          // never carry FORBIDDEN, but the list is the same for every API.
          code: { type: 'string', enum: Object.keys(ERROR_STATUS).sort() },
          message: str,
          details: { type: 'array' },
          requestId: str,
        }),
        Server: obj(['version', 'publicUrl'], {
          version: str,
          publicUrl: { ...str, format: 'uri' },
        }),
        Account: obj(['id', 'email', 'name', 'balanceCents', 'createdAt', 'lowBalanceCents'], {
          id: str,
          email: str,
          name: nullable(str),
          balanceCents: int,
          createdAt: time,
          shortfallCents: int,
          lowBalanceCents: nullable(int),
        }),
        AccountList: obj(['data', 'nextCursor'], {
          data: { type: 'array', items: ref('Account') },
          nextCursor: nullable(str),
        }),
        AccountCreate: obj(['email'], {
          email: { ...str, maxLength: 254 },
          name: { ...str, maxLength: 200 },
        }),
        CreditCreate: obj(['amountCents'], {
          amountCents: { ...int, minimum: 1 },
          reason: { ...str, maxLength: 500 },
        }),
        Credit: obj(['entryId', 'balanceCents'], { entryId: str, balanceCents: int }),
        KeyCreate: obj([], {
          name: { ...str, maxLength: 200 },
          dailyCapCents: nullable({ ...int, minimum: 0 }),
          rateLimitPerMinute: { ...int, minimum: 1, maximum: 2_147_483_647 },
          mode: { enum: ['live', 'test'] },
        }),
        NewKey: {
          type: 'object',
          required: [
            'id',
            'key',
            'start',
            'name',
            'dailyCapCents',
            'rateLimitPerMinute',
            'createdAt',
          ],
          properties: {
            id: str,
            key: str,
            start: str,
            name: str,
            dailyCapCents: nullable(int),
            rateLimitPerMinute: int,
            createdAt: time,
          },
        },
        RevokedKey: obj(['id', 'revokedAt'], { id: str, revokedAt: time }),
        Refunded: { type: 'object', required: ['id'], properties: { id: str } },
        LedgerEntry: {
          type: 'object',
          required: ['id', 'kind', 'amountCents', 'createdAt'],
          properties: {
            id: str,
            kind: str,
            amountCents: int,
            generationId: str,
            reason: str,
            createdAt: time,
          },
        },
        LedgerList: obj(['data', 'nextCursor'], {
          data: { type: 'array', items: ref('LedgerEntry') },
          nextCursor: nullable(str),
        }),
        LinkCreate: obj(['email'], {
          email: { ...str, maxLength: 254 },
          name: { ...str, maxLength: 200 },
        }),
        ResetCreate: obj(['email'], { email: { ...str, maxLength: 254 } }),
        ...auditSchemas,
        ...memberSchemas(helpers),
        ...budgetAdminSchemas(helpers),
        Link: obj(['accountId', 'email', 'purpose', 'link', 'expiresAt'], {
          accountId: str,
          email: str,
          purpose: { enum: ['invite', 'reset'] },
          link: { ...str, format: 'uri' },
          expiresAt: time,
        }),
      },
    },
  };
}
