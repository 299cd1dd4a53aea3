// The resource schemas of the OpenAPI document (docs/api.md), in JSON Schema 2020-12 as OpenAPI 3.1
// takes it. Response objects refuse unknown properties, so a field the server adds without the document
// (or drops) fails the tests that validate every response against it.
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: 'string' };
const int = { type: 'integer' };
const time = { type: 'string', format: 'date-time' };
const nullable = (s: Record<string, unknown>) => ({ ...s, type: [s.type as string, 'null'] });
const obj = (required: string[], properties: Record<string, unknown>, description?: string) => ({
  type: 'object',
  ...(description ? { description } : {}),
  required,
  additionalProperties: false,
  properties,
});
const page = (item: string) =>
  obj(
    ['data', 'nextCursor'],
    { data: { type: 'array', items: ref(item) }, nextCursor: nullable(str) },
    'A page, newest first. Pass `nextCursor` as `cursor` for the next one; null on the last page.',
  );

const MODEL_REQUIRED = ['id', 'name', 'kind', 'description', 'output', 'fields'];
const MODEL_PROPS = {
  id: { ...str, examples: ['rendergate/image-to-video'] },
  name: str,
  kind: { enum: ['video', 'image', 'text'] },
  description: str,
  output: {
    oneOf: [
      obj(['type', 'contentType'], { type: { const: 'file' }, contentType: str }),
      obj(['type'], { type: { const: 'text' } }),
    ],
  },
  fields: { type: 'array', items: ref('Field') },
};

export const EVENT_TYPES = [
  'generation.started',
  'generation.succeeded',
  'generation.failed',
  'generation.refunded',
  'account.balance_low',
  'budget.threshold_reached',
];

/** A budget as GET /v1/me and the admin API list it (docs/api.md "Budgets"). */
const BUDGET = obj(['period', 'limitCents', 'spentCents', 'resetsAt'], {
  period: { enum: ['day', 'week', 'month', 'total'] },
  limitCents: int,
  spentCents: { ...int, description: 'Charged less refunded in the current period.' },
  resetsAt: { ...nullable(time), description: 'When the period ends; null for `total`.' },
});

export const resourceSchemas: Record<string, unknown> = {
  Field: obj(
    ['name', 'type', 'required', 'default'],
    {
      name: str,
      type: { enum: ['text', 'url', 'number', 'toggle', 'enum'] },
      required: { type: 'boolean' },
      default: {
        type: ['string', 'number', 'boolean', 'null'],
        description: 'null: no default (the field stays absent when omitted).',
      },
      description: str,
      media: { enum: ['image'], description: 'For url fields: what the address points at.' },
      values: {
        type: 'array',
        items: { type: ['string', 'number'] },
        description: 'enum: allowed values, in order.',
      },
      minimum: { type: 'number' },
      maximum: { type: 'number' },
      integer: { type: 'boolean' },
      maxLength: int,
    },
    'One input of a model.',
  ),
  Model: obj(MODEL_REQUIRED, MODEL_PROPS),
  ModelDetail: obj([...MODEL_REQUIRED, 'inputSchema'], {
    ...MODEL_PROPS,
    inputSchema: {
      type: 'object',
      description: "The model's `inputs` as a JSON Schema (2020-12), derived from its fields.",
    },
  }),
  ModelList: page('Model'),
  Budget: BUDGET,
  Me: obj(['accountId', 'balanceCents', 'currency', 'key', 'budgets'], {
    budgets: obj(['account', 'key'], {
      account: { type: 'array', items: ref('Budget') },
      key: { type: 'array', items: ref('Budget') },
    }),
    accountId: str,
    balanceCents: int,
    currency: { const: 'EUR' },
    key: obj(
      [
        'id',
        'name',
        'start',
        'createdAt',
        'dailyCapCents',
        'spentTodayCents',
        'rateLimitPerMinute',
        'mode',
        'createdBy',
      ],
      {
        id: str,
        name: nullable(str),
        start: str,
        createdAt: time,
        dailyCapCents: nullable(int),
        spentTodayCents: int,
        rateLimitPerMinute: int,
        mode: {
          enum: ['live', 'test'],
          description:
            'A test key (`rg_test_…`) renders for free, with results made by the service itself.',
        },
        createdBy: {
          description: 'Who created the key: a member (by email) or the operator.',
          oneOf: [
            obj(['type', 'email'], { type: { const: 'member' }, email: str }),
            obj(['type'], { type: { const: 'operator' } }),
          ],
        },
      },
    ),
  }),
  Quote: obj(['modelId', 'inputs', 'costCents', 'currency'], {
    modelId: str,
    inputs: ref('ResolvedInputs'),
    costCents: int,
    currency: { const: 'EUR' },
  }),
  ResolvedInputs: {
    type: 'object',
    additionalProperties: { type: ['string', 'number', 'boolean'] },
    description: 'The inputs with defaults applied: what is priced, stored and echoed back.',
  },
  GenerationStatus: {
    enum: ['queued', 'succeeded', 'failed', 'refunded'],
    description:
      '`queued` covers waiting and running (`startedAt` set once it runs); the others are final.',
  },
  Generation: obj(
    [
      'id',
      'modelId',
      'inputs',
      'status',
      'costCents',
      'refundedCents',
      'progress',
      'queuePosition',
      'expiresAt',
      'createdAt',
      'startedAt',
      'completedAt',
    ],
    {
      id: { ...str, examples: ['gen_0190f6f1c2a87c3e9a4e5b6d7c8e9f01'] },
      modelId: str,
      inputs: ref('ResolvedInputs'),
      status: ref('GenerationStatus'),
      costCents: int,
      refundedCents: {
        ...int,
        description: '0, or costCents once the charge was returned (failed, refunded).',
      },
      contentUrl: {
        ...str,
        format: 'uri',
        description: 'Succeeded file output: `{PUBLIC_URL}/v1/generations/{id}/content`.',
      },
      contentType: { ...str, description: 'With contentUrl, e.g. `video/mp4`.' },
      textOutput: { ...str, description: 'Succeeded text output.' },
      error: obj(
        ['code', 'message'],
        { code: str, message: str },
        'Why it failed or was refunded.',
      ),
      progress: {
        type: ['number', 'null'],
        minimum: 0,
        maximum: 1,
        description:
          '0..1 while running when the renderer reports it; 1 when succeeded; else null.',
      },
      queuePosition: {
        type: ['integer', 'null'],
        minimum: 1,
        description: 'While waiting to start: 1 = next of its model; null once started or final.',
      },
      expiresAt: {
        ...nullable(time),
        description: 'When its file will be removed; null if kept forever or no file.',
      },
      createdAt: time,
      startedAt: nullable(time),
      completedAt: nullable(time),
      mode: {
        const: 'test',
        description:
          'Present on renders of test keys only: nothing was charged; `costCents` is the price it would cost.',
      },
    },
  ),
  GenerationList: page('Generation'),
  RenderRequest: { description: 'A model and its inputs (one variant per model of the catalog).' },
  Deleted: obj(['id', 'deleted'], { id: str, deleted: { const: true } }),
  Upload: obj(
    ['id', 'url', 'contentType', 'sizeBytes', 'width', 'height', 'createdAt', 'expiresAt'],
    {
      id: { ...str, examples: ['upl_0190f6f1c2a87c3e9a4e5b6d7c8e9f01'] },
      url: {
        ...str,
        format: 'uri',
        description:
          '`{PUBLIC_URL}/v1/uploads/{id}`: use it as any `url` input with `media: "image"`.',
      },
      contentType: { enum: ['image/png', 'image/jpeg', 'image/webp'] },
      sizeBytes: int,
      width: int,
      height: int,
      createdAt: time,
      expiresAt: time,
    },
  ),
  EventType: { enum: EVENT_TYPES },
  WebhookEndpointCreate: obj(['url'], {
    url: { ...str, format: 'uri', maxLength: 2048 },
    events: { type: 'array', items: ref('EventType'), description: 'Every type when omitted.' },
  }),
  WebhookEndpoint: obj(['id', 'url', 'events', 'enabled', 'mode', 'createdAt'], {
    id: { ...str, examples: ['whe_0190f6f1c2a87c3e9a4e5b6d7c8e9f01'] },
    url: { ...str, format: 'uri' },
    events: { type: 'array', items: ref('EventType') },
    secret: {
      ...str,
      pattern: '^whsec_',
      description:
        'Signing secret (Standard Webhooks); on create and on GET of one endpoint, never in lists.',
    },
    enabled: { type: 'boolean', description: 'false once a delivery was answered 410.' },
    mode: {
      enum: ['live', 'test'],
      description:
        "The key's mode that made it (or the one chosen in the studio). A test endpoint receives " +
        "only test renders' events (`livemode: false`), a live one only live renders'. A key sees " +
        "and deletes only endpoints of its own mode: another mode's is 404 " +
        '`WEBHOOK_ENDPOINT_NOT_FOUND`.',
    },
    createdAt: time,
  }),
  WebhookEndpointList: page('WebhookEndpoint'),
  UploadList: page('Upload'),
  WebhookDelivery: obj(
    [
      'id',
      'eventId',
      'type',
      'generationId',
      'attempts',
      'status',
      'lastResponseStatus',
      'lastError',
      'createdAt',
      'nextAttemptAt',
    ],
    {
      id: str,
      eventId: str,
      type: ref('EventType'),
      generationId: { ...nullable(str), description: "null for an account's event." },
      attempts: int,
      status: { enum: ['pending', 'delivered', 'failed'] },
      lastResponseStatus: nullable(int),
      lastError: {
        ...nullable(str),
        description:
          'One sentence on the last failed attempt ("HTTP 500", "no answer within 15 s", "address refused: 127.0.0.1 is a loopback address"); null when none failed.',
      },
      createdAt: time,
      nextAttemptAt: nullable(time),
    },
  ),
  WebhookDeliveryList: page('WebhookDelivery'),
  UsageEntry: obj(
    ['renders', 'spentCents'],
    {
      day: { ...str, format: 'date', description: 'With `groupBy` day: the day (YYYY-MM-DD).' },
      modelId: { ...str, description: 'With `groupBy` model.' },
      keyId: { ...nullable(str), description: 'With `groupBy` key; null: started in the studio.' },
      member: {
        ...nullable(str),
        description:
          "With `groupBy` member: the email of who started the renders in the studio; null for a key's renders.",
      },
      renders: { ...int, description: 'Renders created, whatever became of them.' },
      spentCents: { ...int, description: 'Charged less returned (a test render: its price).' },
    },
    'One group: the fields it is grouped by, then its numbers.',
  ),
  Usage: obj(['from', 'to', 'data'], {
    from: { ...str, format: 'date' },
    to: { ...str, format: 'date' },
    data: { type: 'array', items: ref('UsageEntry') },
  }),
  BalanceLowEvent: obj(['accountId', 'balanceCents', 'thresholdCents'], {
    accountId: str,
    balanceCents: int,
    thresholdCents: int,
  }),
  BudgetThresholdEvent: obj(['scope', 'id', 'period', 'limitCents', 'spentCents', 'percent'], {
    scope: { enum: ['account', 'member', 'key'] },
    id: str,
    period: { enum: ['day', 'week', 'month', 'total'] },
    limitCents: int,
    spentCents: int,
    percent: { enum: [80, 100] },
  }),
  AlertEvent: obj(
    ['type', 'timestamp', 'livemode', 'data'],
    {
      type: { enum: ['account.balance_low', 'budget.threshold_reached'] },
      timestamp: time,
      livemode: { type: 'boolean', description: "false for a test key's budget." },
      data: { oneOf: [ref('BalanceLowEvent'), ref('BudgetThresholdEvent')] },
    },
    "An account's alert, sent as the POST body and signed as every event is.",
  ),
  WebhookEvent: obj(
    ['type', 'timestamp', 'livemode', 'data'],
    {
      type: { enum: EVENT_TYPES.filter((t) => t.startsWith('generation.')) },
      timestamp: time,
      livemode: { type: 'boolean', description: 'false for the renders of test keys.' },
      data: ref('Generation'),
    },
    'Sent as the POST body, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`).',
  ),
};
