// The OpenAPI 3.1 document of /v1: the one description clients, generators, the reference page and
// the tests read. Built once at start from the code's own tables (error codes, resource schemas) and
// the loaded catalog (each model's inputs as a JSON Schema).
import type { Catalog } from '../../domain/catalog-load.ts';
import { inputSchemaOf } from '../../domain/input-schema.ts';
import { errorComponents } from './errors.ts';
import { paths } from './paths.ts';
import { EVENT_TYPES, resourceSchemas } from './schemas.ts';
import { openAiErrorResponses, openAiPaths, openAiSchemas } from './openai.ts';
import { responsesSchemas } from './openai-responses.ts';

// RFC 7240 `Prefer`: comma-separated preferences, each `token [= word] *( ; [token [= word]] )`.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const WORD = String.raw`(?:${TOKEN}|"(?:[^"\\]|\\.)*")`;
const SP = '[ \\t]*';
const PREFERENCE = `${TOKEN}(?:${SP}=${SP}${WORD})?(?:${SP};${SP}(?:${TOKEN}(?:${SP}=${SP}${WORD})?)?)*`;
// Empty list elements are allowed, as RFC 9110 5.6.1 asks recipients to accept.
export const PREFER_PATTERN = `^(?:${SP},)*${SP}${PREFERENCE}(?:${SP},(?:${SP}${PREFERENCE})?)*${SP}$`;

/** The component name of a model's inputs schema (component names allow `[A-Za-z0-9._-]`). */
export const inputsComponent = (modelId: string) =>
  `Inputs.${modelId.replace(/[^A-Za-z0-9._-]/g, '.')}`;

const DESCRIPTION = `A metered rendering API over a catalog of generative models.

Money is integer euro cents (fields ending in \`Cents\`); times are RFC 3339 UTC; ids carry a type prefix
and sort by creation time. Every response carries \`X-Request-Id\`. Lists page with \`limit\` (1-100, default 20)
and \`cursor\` (the previous page's \`nextCursor\`), newest first.

Authenticate with \`Authorization: Bearer <key>\`. Every authenticated answer (not 401) carries
\`RateLimit-Policy\` and \`RateLimit\`; a 429 adds \`Retry-After\`.`;

const TAGS = [
  ['Account', 'The account and key making the request.'],
  ['Models', 'The catalog.'],
  ['Generations', 'Renders: priced, charged, queued, read, cancelled.'],
  ['Uploads', 'Images to use as inputs.'],
  ['Webhooks', 'Endpoints that receive generation events.'],
  ['Usage', 'Renders and spend over a range of days.'],
  ['Reference', 'This document.'],
  ['Billing', 'Top-ups through Stripe Checkout (Stripe calls it, not clients).'],
  [
    'OpenAI',
    "OpenAI's chat API over the catalog's text models (`/openai/v1`), for OpenAI's SDKs and tools built on them.",
  ],
].map(([name, description]) => ({ name, description }));

export function buildOpenApiDocument(catalog: Catalog, serverUrl: string, version = '1.0.0') {
  const errors = errorComponents();
  const inputs: Record<string, unknown> = {};
  for (const m of catalog.models) inputs[inputsComponent(m.id)] = inputSchemaOf(m);
  const renderRequest = {
    description: 'A model and its inputs: one variant per model of the catalog.',
    oneOf: catalog.models.map((m) => ({
      type: 'object',
      title: m.id,
      required: ['modelId', 'inputs'],
      properties: {
        modelId: { const: m.id },
        inputs: { $ref: `#/components/schemas/${inputsComponent(m.id)}` },
      },
    })),
  };
  const event = (type: string) => ({
    post: {
      operationId: `event.${type}`,
      summary: type.startsWith('generation.')
        ? `Sent when a generation ${type.split('.')[1]}.`
        : type === 'account.balance_low'
          ? 'Sent when a change takes the balance below the low-balance alert.'
          : 'Sent when a budget reaches 80 % or 100 % of its limit (once per period each).',
      tags: ['Webhooks'],
      parameters: ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({
        name,
        in: 'header',
        required: true,
        schema: { type: 'string' },
      })),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              $ref: `#/components/schemas/${type.startsWith('generation.') ? 'WebhookEvent' : 'AlertEvent'}`,
            },
          },
        },
      },
      responses: {
        '2XX': {
          description:
            'Delivered. Anything else (or no answer within 15 s) is retried; 410 disables the endpoint.',
        },
      },
    },
  });
  return {
    openapi: '3.1.0',
    info: { title: 'Rendergate API', version, description: DESCRIPTION },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }],
    tags: TAGS,
    paths: { ...paths(), ...openAiPaths() },
    webhooks: Object.fromEntries(EVENT_TYPES.map((t) => [t, event(t)])),
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `rg_live_…`.' },
      },
      schemas: {
        ...resourceSchemas,
        RenderRequest: renderRequest,
        ...inputs,
        ...errors.schemas,
        ...openAiSchemas,
        ...responsesSchemas,
      },
      responses: { ...errors.responses, ...openAiErrorResponses },
      parameters: {
        limit: {
          name: 'limit',
          in: 'query',
          schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        },
        cursor: {
          name: 'cursor',
          in: 'query',
          schema: { type: 'string' },
          description: "The previous page's `nextCursor`.",
        },
        'Idempotency-Key': {
          name: 'Idempotency-Key',
          in: 'header',
          required: true,
          schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
          description:
            'Replaying the same key with the same body returns the original answer and charges nothing. Kept ≥ 24 h per account.',
        },
        Prefer: {
          name: 'Prefer',
          in: 'header',
          schema: { type: 'string', pattern: PREFER_PATTERN },
          example: 'wait=30',
          description:
            '`wait=N` (1-60): hold the answer until the generation is final or N seconds passed (RFC 7240; other preferences are ignored).',
        },
      },
      headers: {
        'X-Request-Id': {
          required: true,
          schema: { type: 'string' },
          description: 'Echoed when the client sent one of ≤ 128 safe characters.',
        },
        RateLimit: {
          schema: { type: 'string', pattern: '^"default";r=\\d+;t=\\d+$' },
          description: "Remaining requests and seconds to the window's reset.",
        },
        'RateLimit-Policy': {
          schema: { type: 'string', pattern: '^"default";q=\\d+;w=60$' },
          description: "The key's limit per minute.",
        },
        'Retry-After': {
          required: true,
          schema: { type: 'string', pattern: '^\\d+$' },
          description: 'Seconds to wait before retrying.',
        },
        'Preference-Applied': {
          schema: { type: 'string', pattern: '^wait=\\d+$' },
          description: 'Set when a `Prefer: wait=N` was honoured.',
        },
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

/** The document's sections (its tags' names), in order: the links atop the studio's /docs. */
export const openApiSections = (catalog: Catalog, serverUrl: string): string[] =>
  ((buildOpenApiDocument(catalog, serverUrl).tags ?? []) as { name: string }[]).map((t) => t.name);
