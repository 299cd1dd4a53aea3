// The /openai/v1 operations of the OpenAPI document (tag OpenAI): OpenAI's chat API over the catalog's
// text models, with OpenAI's error body. Shapes after OpenAI's API reference as its SDK (`openai` on
// npm) reads them; only the fields this service sends are described.
import { responsesPath } from './openai-responses.ts';
import { errorResponse, errors, RATE, REQUEST_ID, schema } from './openai-common.ts';

/** `components.responses` of the OpenAI-shaped errors, one per status. */
export const openAiErrorResponses = {
  OpenAIError400: errorResponse(
    "The request is malformed or names a parameter the model cannot take (`param`); or the render failed or was refunded while the request waited (`type` `server_error`, `code` the generation's error code such as `MODEL_FAILED`; its charge was returned). 400 because no OpenAI client library retries it at its default settings, and the same request would make a new render.",
    {
      ...RATE,
      'X-Should-Retry': {
        schema: { type: 'string', const: 'false' },
        description: "On a failed render: OpenAI's SDKs do not retry it.",
      },
    },
  ),
  OpenAIError401: errorResponse('No valid API key.', {
    'WWW-Authenticate': {
      required: true,
      schema: { type: 'string', pattern: '^Bearer realm=' },
      description: 'RFC 6750: `Bearer realm="rendergate"`.',
    },
  }),
  OpenAIError402: errorResponse('The balance is below the price (`INSUFFICIENT_BALANCE`).', RATE),
  OpenAIError403: errorResponse(
    'The key may not do this (`FORBIDDEN`); the message names what is missing.',
    RATE,
  ),
  OpenAIError404: errorResponse('No such model (`MODEL_NOT_FOUND`) or route.', RATE),
  OpenAIError405: errorResponse(
    'The path does not serve this method; `Allow` lists those it does.',
    {
      Allow: { required: true, schema: { type: 'string' } },
    },
  ),
  OpenAIError408: errorResponse(
    'The render was not final within 60 s (send the same Idempotency-Key again to keep waiting).',
    RATE,
  ),
  OpenAIError409: errorResponse('Daily cap reached, or the Idempotency-Key is in use.', RATE),
  OpenAIError413: errorResponse('The body is over the limit.', RATE),
  OpenAIError415: errorResponse('The body is not JSON.', RATE),
  OpenAIError422: errorResponse('The Idempotency-Key was used before with a different body.', RATE),
  OpenAIError429: errorResponse('Too many requests on this key.', {
    ...RATE,
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  }),
  OpenAIError500: errorResponse('A bug (`INTERNAL_ERROR`).', RATE),
  OpenAIError503: errorResponse('The database is unreachable.', {
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  }),
};

const TEXT_PART = {
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: 'text' }, text: { type: 'string' } },
};

export const openAiSchemas = {
  OpenAIError: {
    type: 'object',
    required: ['error'],
    description: "OpenAI's error body; `code` is the v1 error code.",
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string', examples: ['invalid_request_error'] },
          param: { type: ['string', 'null'], examples: ['messages'] },
          code: { type: 'string', examples: ['INVALID_INPUT'] },
        },
      },
    },
  },
  OpenAIModel: {
    type: 'object',
    required: ['id', 'object', 'created', 'owned_by'],
    properties: {
      id: { type: 'string' },
      object: { const: 'model' },
      created: { type: 'integer' },
      owned_by: { type: 'string' },
    },
  },
  OpenAIModelList: {
    type: 'object',
    required: ['object', 'data'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: schema('OpenAIModel') },
    },
  },
  ChatMessage: {
    type: 'object',
    required: ['role'],
    properties: {
      role: { enum: ['system', 'developer', 'user', 'assistant'] },
      content: {
        oneOf: [{ type: 'string' }, { type: 'array', items: TEXT_PART }, { type: 'null' }],
      },
    },
  },
  ChatCompletionRequest: {
    type: 'object',
    required: ['model', 'messages'],
    description:
      "OpenAI's chat request. The last user message's text becomes the model's `openai.input` field; a `driver: openai` model gets the messages as they are, after the catalog's system messages, and every message's text counts against that field's limits and in its price. Parameters that would change the answer and that the model cannot honour are refused (400 naming the parameter): `n` > 1, tools, images, `logprobs`, audio `modalities`, `response_format` other than `text` (a `driver: openai` model takes `json_object` and `json_schema`, passed to its server). Other OpenAI parameters are accepted and not used.",
    properties: {
      model: { type: 'string', examples: ['rendergate/shot-list'] },
      messages: { type: 'array', minItems: 1, items: schema('ChatMessage') },
      stream: { type: ['boolean', 'null'] },
      max_tokens: { type: ['integer', 'null'] },
      n: { type: ['integer', 'null'], const: 1 },
      response_format: { type: ['object', 'null'] },
      stream_options: {
        type: ['object', 'null'],
        properties: { include_usage: { type: 'boolean' } },
      },
    },
  },
  RendergateUsage: {
    type: 'object',
    required: ['generationId', 'costCents'],
    description: 'The render behind the answer and what it was charged.',
    properties: { generationId: { type: 'string' }, costCents: { type: 'integer' } },
  },
  ChatUsage: {
    type: 'object',
    required: ['prompt_tokens', 'completion_tokens', 'total_tokens', 'rendergate'],
    description:
      "Tokens: the backend's own counts where it reports them, otherwise counted with OpenAI's `o200k_base` encoding.",
    properties: {
      prompt_tokens: { type: 'integer' },
      completion_tokens: { type: 'integer' },
      total_tokens: { type: 'integer' },
      rendergate: schema('RendergateUsage'),
    },
  },
  ChatCompletion: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
    properties: {
      id: { type: 'string', description: "The generation's id (`/v1/generations/{id}`)." },
      object: { const: 'chat.completion' },
      usage: schema('ChatUsage'),
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        minItems: 1,
        maxItems: 1,
        items: {
          type: 'object',
          required: ['index', 'message', 'finish_reason'],
          properties: {
            index: { const: 0 },
            finish_reason: { const: 'stop' },
            logprobs: { type: 'null' },
            message: {
              type: 'object',
              required: ['role', 'content'],
              properties: {
                role: { const: 'assistant' },
                content: { type: 'string', description: "The generation's `textOutput`." },
                refusal: { type: 'null' },
              },
            },
          },
        },
      },
    },
  },
};

const CHAT_STREAM = {
  schema: {
    type: 'string',
    description:
      'With `stream: true`: server-sent events, each `data: <chat.completion.chunk JSON>`, the last `data: [DONE]`. A render that fails sends `data: {"error": {…}}` instead, and so does a render retried after part of its answer was streamed whose retry wrote another text (`code` `STREAM_DIVERGED`; the text is the generation\'s): a stream that ends with `finish_reason` `stop` carries exactly the generation\'s `textOutput`.',
  },
};

export function openAiPaths() {
  const tags = ['OpenAI'];
  return {
    '/openai/v1/models': {
      get: {
        operationId: 'openaiListModels',
        summary: "The catalog's text models, as OpenAI's model list.",
        tags,
        responses: {
          200: {
            description: 'The text models.',
            headers: { ...REQUEST_ID, ...RATE },
            content: { 'application/json': { schema: schema('OpenAIModelList') } },
          },
          ...errors([400, 401, 429, 500, 503]),
        },
      },
    },
    '/openai/v1/models/{vendor}/{name}': {
      get: {
        operationId: 'openaiGetModel',
        summary: 'One text model.',
        tags,
        parameters: ['vendor', 'name'].map((name) => ({
          name,
          in: 'path',
          required: true,
          schema: { type: 'string' },
        })),
        responses: {
          200: {
            description: 'The model.',
            headers: { ...REQUEST_ID, ...RATE },
            content: { 'application/json': { schema: schema('OpenAIModel') } },
          },
          ...errors([400, 401, 404, 429, 500, 503]),
        },
      },
    },
    ...responsesPath(),
    '/openai/v1/chat/completions': {
      post: {
        operationId: 'openaiCreateChatCompletion',
        tags,
        summary:
          'A render of a text model, priced and charged like POST /v1/generations, answered when final (within 60 s).',
        description:
          'An `Idempotency-Key` is honoured (one is made when absent): send one per request and keep it across retries to be charged once.',
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            schema: { type: 'string' },
            description: 'As on POST /v1/generations; optional here.',
          },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: schema('ChatCompletionRequest') } },
        },
        responses: {
          200: {
            description: 'The completion (or, with `stream: true`, its chunks).',
            headers: { ...REQUEST_ID, ...RATE },
            content: {
              'application/json': { schema: schema('ChatCompletion') },
              'text/event-stream': CHAT_STREAM,
            },
          },
          ...errors([400, 401, 402, 403, 404, 408, 409, 413, 415, 422, 429, 500, 503]),
        },
      },
    },
  };
}
