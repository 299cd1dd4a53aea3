// POST /openai/v1/responses in the OpenAPI document (tag OpenAI): OpenAI's Responses API over the
// same renders as chat completions. Shapes after OpenAI's API reference as its SDK and the AI SDK
// read them; only the fields this service sends are described.
import { errors, RATE, REQUEST_ID, schema } from './openai-common.ts';

export const responsesSchemas = {
  ResponseRequest: {
    type: 'object',
    required: ['model', 'input'],
    description:
      "OpenAI's Responses request: `input` a string or a list of messages, `instructions` a system message in front. Refused (400 naming the parameter): tools, `previous_response_id` and stored conversations, log-probabilities, `text.format` other than `text` (a `driver: openai` model takes JSON formats, passed to its server). Other parameters are accepted and not used.",
    properties: {
      model: { type: 'string', examples: ['rendergate/shot-list'] },
      input: {
        oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: schema('ChatMessage') }],
      },
      instructions: { type: ['string', 'null'] },
      stream: { type: ['boolean', 'null'] },
      text: { type: ['object', 'null'] },
    },
  },
  ResponseUsage: {
    type: 'object',
    required: ['input_tokens', 'output_tokens', 'total_tokens', 'rendergate'],
    description:
      "Tokens: the backend's own counts where it reports them, otherwise counted with OpenAI's `o200k_base` encoding.",
    properties: {
      input_tokens: { type: 'integer' },
      input_tokens_details: { type: 'object' },
      output_tokens: { type: 'integer' },
      output_tokens_details: { type: 'object' },
      total_tokens: { type: 'integer' },
      rendergate: schema('RendergateUsage'),
    },
  },
  Response: {
    type: 'object',
    required: ['id', 'object', 'created_at', 'status', 'model', 'output', 'usage'],
    properties: {
      id: { type: 'string', description: "The generation's id (`/v1/generations/{id}`)." },
      object: { const: 'response' },
      created_at: { type: 'integer' },
      status: { const: 'completed' },
      model: { type: 'string' },
      output_text: { type: 'string', description: "The generation's `textOutput`." },
      output: {
        type: 'array',
        minItems: 1,
        maxItems: 1,
        items: {
          type: 'object',
          required: ['id', 'type', 'role', 'status', 'content'],
          properties: {
            id: { type: 'string' },
            type: { const: 'message' },
            role: { const: 'assistant' },
            status: { const: 'completed' },
            content: {
              type: 'array',
              items: {
                type: 'object',
                required: ['type', 'text'],
                properties: { type: { const: 'output_text' }, text: { type: 'string' } },
              },
            },
          },
        },
      },
      usage: schema('ResponseUsage'),
    },
  },
};

const RESPONSE_STREAM = {
  schema: {
    type: 'string',
    description:
      "With `stream: true`: OpenAI's typed server-sent events, each `event: <type>` and `data: {type, sequence_number, …}`: `response.created`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`, `response.output_text.delta` (as the backend streams), `response.output_text.done`, `response.content_part.done`, `response.output_item.done`, `response.completed` (with `usage`). A render that fails ends with `response.failed`, its `response.error` naming the generation's error code.",
  },
};

export function responsesPath() {
  return {
    '/openai/v1/responses': {
      post: {
        operationId: 'openaiCreateResponse',
        tags: ['OpenAI'],
        summary:
          'A render of a text model through the Responses API, priced and charged like POST /v1/generations, answered when final (within 60 s).',
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
          content: { 'application/json': { schema: schema('ResponseRequest') } },
        },
        responses: {
          200: {
            description: 'The response (or, with `stream: true`, its events).',
            headers: { ...REQUEST_ID, ...RATE },
            content: {
              'application/json': { schema: schema('Response') },
              'text/event-stream': RESPONSE_STREAM,
            },
          },
          ...errors([400, 401, 402, 403, 404, 408, 409, 413, 415, 422, 429, 500, 503]),
        },
      },
    },
  };
}
