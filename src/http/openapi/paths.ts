// The operations of /v1 (docs/api.md). Each lists the statuses it can answer; error
// statuses share one response per status (errors.ts), so a code moves status in one place only.
const schema = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: schema(name) } });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const RATE = { RateLimit: header('RateLimit'), 'RateLimit-Policy': header('RateLimit-Policy') };

/** Statuses any authenticated request can get, whatever its route. */
const COMMON = [400, 401, 408, 429, 431, 500, 503];
/** Statuses of a request that may carry a body. */
const WITH_BODY = [413, 415];

interface Op {
  id: string;
  summary: string;
  description?: string;
  tag: string;
  params?: unknown[];
  body?: unknown;
  ok: Record<string, unknown>;
  errors?: number[];
  public?: boolean;
}

function op(o: Op, method: string) {
  const responses: Record<string, unknown> = { ...o.ok };
  const errs = new Set([
    ...(o.public ? [400, 408, 431, 500] : COMMON),
    ...(method === 'get' ? [] : WITH_BODY),
    ...(o.errors ?? []),
  ]);
  for (const s of [...errs].sort())
    responses[String(s)] = { $ref: `#/components/responses/Error${s}` };
  return {
    operationId: o.id,
    summary: o.summary,
    ...(o.description ? { description: o.description } : {}),
    tags: [o.tag],
    ...(o.public ? { security: [] } : {}),
    ...(o.params ? { parameters: o.params } : {}),
    ...(o.body ? { requestBody: o.body } : {}),
    responses,
  };
}

const ok = (
  description: string,
  body: string,
  headers: Record<string, unknown> = {},
  status = '200',
) => ({
  [status]: {
    description,
    headers: { 'X-Request-Id': header('X-Request-Id'), ...RATE, ...headers },
    content: json(body),
  },
});

const ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const LIST = [param('limit'), param('cursor')];
const IMAGE_BODY = { type: 'string', contentMediaType: 'application/octet-stream' };

export function paths() {
  return {
    '/v1/openapi.json': {
      get: op(
        {
          id: 'getOpenApi',
          tag: 'Reference',
          public: true,
          summary: 'This document (no key needed).',
          ok: {
            200: {
              description: 'The OpenAPI 3.1 document.',
              headers: { 'X-Request-Id': header('X-Request-Id') },
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
        'get',
      ),
    },
    '/v1/me': {
      get: op(
        {
          id: 'getMe',
          tag: 'Account',
          summary: 'The account and the key making the request.',
          ok: ok('The account and key.', 'Me'),
        },
        'get',
      ),
    },
    '/v1/models': {
      get: op(
        {
          id: 'listModels',
          tag: 'Models',
          summary: 'The catalog (one page).',
          ok: ok('Every model.', 'ModelList'),
        },
        'get',
      ),
    },
    '/v1/models/detail': {
      get: op(
        {
          id: 'getModel',
          tag: 'Models',
          summary: 'One model, with its inputs as a JSON Schema.',
          params: [
            {
              name: 'id',
              in: 'query',
              required: true,
              schema: { type: 'string' },
              example: 'rendergate/image-to-video',
            },
          ],
          ok: ok('The model.', 'ModelDetail'),
          errors: [404],
        },
        'get',
      ),
    },
    '/v1/quote': {
      post: op(
        {
          id: 'createQuote',
          tag: 'Generations',
          summary: 'The price of a render; nothing is charged.',
          body: { required: true, content: json('RenderRequest') },
          ok: ok('The resolved inputs and their price.', 'Quote'),
        },
        'post',
      ),
    },
    '/v1/generations': {
      post: op(
        {
          id: 'createGeneration',
          tag: 'Generations',
          summary: 'Start a render: priced, charged and queued in one step.',
          description:
            'Checks run in this order, the first that fails answers: auth (401) → rate limit (429) → Idempotency-Key (400) → body and inputs (400) → idempotency replay or conflict (202 replay / 409 / 422) → balance (402) → daily cap (409) → charge.',
          params: [param('Idempotency-Key'), param('Prefer')],
          body: { required: true, content: json('RenderRequest') },
          ok: ok(
            'Created (or replayed): the generation.',
            'Generation',
            {
              Location: {
                required: true,
                description: "The generation's URL.",
                schema: { type: 'string' },
              },
              'Idempotent-Replayed': {
                description:
                  '`true` when this is the answer to an earlier request with the same key.',
                schema: { const: 'true' },
              },
              'Preference-Applied': header('Preference-Applied'),
            },
            '202',
          ),
          errors: [402, 409, 422],
        },
        'post',
      ),
      get: op(
        {
          id: 'listGenerations',
          tag: 'Generations',
          summary: "The account's generations, newest first.",
          params: [
            ...LIST,
            { name: 'status', in: 'query', schema: schema('GenerationStatus') },
            { name: 'modelId', in: 'query', schema: { type: 'string' } },
          ],
          ok: ok('A page of generations.', 'GenerationList'),
        },
        'get',
      ),
    },
    '/v1/generations/{id}': {
      get: op(
        {
          id: 'getGeneration',
          tag: 'Generations',
          summary: 'One generation.',
          params: [ID, param('Prefer')],
          ok: ok('The generation.', 'Generation', {
            'Preference-Applied': header('Preference-Applied'),
          }),
          errors: [404],
        },
        'get',
      ),
      delete: op(
        {
          id: 'deleteGeneration',
          tag: 'Generations',
          summary:
            'Delete a generation and its file; a queued one is cancelled first and refunded.',
          params: [ID],
          ok: ok('Deleted.', 'Deleted'),
          errors: [404],
        },
        'delete',
      ),
    },
    '/v1/generations/{id}/cancel': {
      post: op(
        {
          id: 'cancelGeneration',
          tag: 'Generations',
          summary: 'Cancel a queued generation: it becomes refunded; the record stays.',
          params: [ID],
          ok: ok('The generation (refunded).', 'Generation'),
          errors: [404, 409],
        },
        'post',
      ),
    },
    '/v1/generations/{id}/content': {
      get: op(
        {
          id: 'getGenerationContent',
          tag: 'Generations',
          summary: 'The output file; single byte ranges.',
          params: [
            ID,
            { name: 'Range', in: 'header', schema: { type: 'string' }, example: 'bytes=0-1023' },
            { name: 'If-None-Match', in: 'header', schema: { type: 'string' } },
            { name: 'If-Range', in: 'header', schema: { type: 'string' } },
          ],
          ok: {
            200: {
              description: 'The whole file.',
              headers: { 'X-Request-Id': header('X-Request-Id'), ...RATE, ...fileHeaders() },
              content: { '*/*': { schema: IMAGE_BODY } },
            },
            206: {
              description: 'The requested range.',
              headers: {
                'X-Request-Id': header('X-Request-Id'),
                ...RATE,
                ...fileHeaders(),
                'Content-Range': {
                  required: true,
                  schema: { type: 'string', pattern: '^bytes \\d+-\\d+/\\d+$' },
                },
              },
              content: { '*/*': { schema: IMAGE_BODY } },
            },
            304: {
              description: 'Not modified (If-None-Match).',
              headers: {
                'X-Request-Id': header('X-Request-Id'),
                ETag: { required: true, schema: { type: 'string' } },
              },
            },
          },
          errors: [404, 409, 410, 416],
        },
        'get',
      ),
    },
    '/v1/uploads': {
      post: op(
        {
          id: 'createUpload',
          tag: 'Uploads',
          summary: 'Upload an image to use as a `url` input.',
          body: {
            required: true,
            content: Object.fromEntries(
              ['image/png', 'image/jpeg', 'image/webp'].map((t) => [
                t,
                { schema: { type: 'string', contentMediaType: t } },
              ]),
            ),
          },
          ok: ok(
            'Stored.',
            'Upload',
            { Location: { description: "The upload's url.", schema: { type: 'string' } } },
            '201',
          ),
          description:
            'Live uploads of an account (not deleted, not expired) are bounded in bytes and number; past either, 409 `UPLOAD_QUOTA_EXCEEDED` with the usage and the quota in `details`.',
          errors: [409, 507],
        },
        'post',
      ),
      get: op(
        {
          id: 'listUploads',
          tag: 'Uploads',
          summary: "The account's live uploads (not deleted, not expired), newest first.",
          params: LIST,
          ok: ok('A page of uploads.', 'UploadList'),
        },
        'get',
      ),
    },
    '/v1/uploads/{id}': {
      get: op(
        {
          id: 'getUpload',
          tag: 'Uploads',
          summary: "The uploaded bytes, with the upload's Content-Type.",
          params: [ID],
          ok: {
            200: {
              description: 'The image.',
              headers: { 'X-Request-Id': header('X-Request-Id'), ...RATE },
              content: Object.fromEntries(
                ['image/png', 'image/jpeg', 'image/webp'].map((t) => [
                  t,
                  { schema: { type: 'string', contentMediaType: t } },
                ]),
              ),
            },
          },
          errors: [404],
        },
        'get',
      ),
      delete: op(
        {
          id: 'deleteUpload',
          tag: 'Uploads',
          summary: 'Remove an upload.',
          params: [ID],
          ok: ok('Deleted.', 'Deleted'),
          errors: [404],
        },
        'delete',
      ),
    },
    '/v1/webhook-endpoints': {
      post: op(
        {
          id: 'createWebhookEndpoint',
          tag: 'Webhooks',
          summary: 'Add an endpoint (at most 10 per account).',
          body: { required: true, content: json('WebhookEndpointCreate') },
          errors: [409],
          ok: ok(
            'Created, with its secret.',
            'WebhookEndpoint',
            {
              Location: {
                required: true,
                description: "The endpoint's URL.",
                schema: { type: 'string' },
              },
            },
            '201',
          ),
        },
        'post',
      ),
      get: op(
        {
          id: 'listWebhookEndpoints',
          tag: 'Webhooks',
          summary: "The account's endpoints, without secrets.",
          params: LIST,
          ok: ok('A page of endpoints.', 'WebhookEndpointList'),
        },
        'get',
      ),
    },
    '/v1/webhook-endpoints/{id}': {
      get: op(
        {
          id: 'getWebhookEndpoint',
          tag: 'Webhooks',
          summary: 'One endpoint, with its secret.',
          params: [ID],
          ok: ok('The endpoint.', 'WebhookEndpoint'),
          errors: [404],
        },
        'get',
      ),
      delete: op(
        {
          id: 'deleteWebhookEndpoint',
          tag: 'Webhooks',
          summary: 'Remove an endpoint.',
          params: [ID],
          ok: ok('Deleted.', 'Deleted'),
          errors: [404],
        },
        'delete',
      ),
    },
    '/webhooks/stripe': {
      post: {
        operationId: 'receiveStripeEvent',
        tags: ['Billing'],
        security: [],
        summary: "Stripe's events for Checkout top-ups (only when Stripe is configured; else 404).",
        description:
          'Verified with the `Stripe-Signature` header over the raw body (300 s tolerance). A paid ' +
          '`checkout.session.completed` or `checkout.session.async_payment_succeeded` credits `amount_total` once per ' +
          'session; `charge.refunded` and `charge.dispute.created` of a top-up take it back (ledger kind `reversal`); ' +
          'other events change nothing. Answered only once the change is committed. See docs/billing.md.',
        parameters: [
          { name: 'Stripe-Signature', in: 'header', required: true, schema: { type: 'string' } },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { type: 'object', description: 'A Stripe Event.' } },
          },
        },
        responses: {
          200: {
            description: 'Received; `outcome` says what it did.',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['received', 'outcome'],
                  additionalProperties: false,
                  properties: {
                    received: { const: true },
                    outcome: { enum: ['credited', 'duplicate', 'ignored', 'refused', 'reversed'] },
                  },
                },
              },
            },
          },
          400: { $ref: '#/components/responses/Error400' },
          404: { $ref: '#/components/responses/Error404' },
          413: { $ref: '#/components/responses/Error413' },
          500: { $ref: '#/components/responses/Error500' },
          503: { $ref: '#/components/responses/Error503' },
        },
      },
    },
    '/v1/webhook-endpoints/{id}/deliveries': {
      get: op(
        {
          id: 'listWebhookDeliveries',
          tag: 'Webhooks',
          summary: 'Deliveries to one endpoint, newest first.',
          params: [ID, ...LIST],
          ok: ok('A page of deliveries.', 'WebhookDeliveryList'),
          errors: [404],
        },
        'get',
      ),
    },
  };
}

function fileHeaders() {
  return {
    'Content-Length': { required: true, schema: { type: 'string', pattern: '^\\d+$' } },
    ETag: { required: true, schema: { type: 'string' } },
    'Accept-Ranges': { required: true, schema: { const: 'bytes' } },
  };
}
