// The operations of /v1/generations: create, list, read, cancel, delete, the file and the live
// events (docs/api.md).
import { schema, json, header, param, RATE, op, ok, ID, LIST, IMAGE_BODY } from './operation.ts';

export function generationPaths() {
  return {
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
    '/v1/generations/{id}/events': {
      get: op(
        {
          id: 'streamGenerationEvents',
          tag: 'Generations',
          summary: "A render's live events (server-sent events) until its final status.",
          description:
            'At once an `event: generation` with the generation as GET answers it, then one at ' +
            'each change of its status, start or progress; each has an increasing `id`, and ' +
            '`data` is the Generation JSON. The stream ends after the final status. ' +
            '`Last-Event-ID` resumes: the current state comes first when anything was missed. ' +
            'A comment line every 15 s keeps it open. Past its share of streams (a tenth of ' +
            "the process's `RENDERGATE_MAX_WAITERS`) an account is answered 429.",
          params: [
            ID,
            {
              name: 'Last-Event-ID',
              in: 'header',
              schema: { type: 'string', pattern: '^\\d{1,15}$' },
              description: 'The `id` of the last event received: the stream resumes after it.',
            },
          ],
          ok: {
            200: {
              description: 'The event stream.',
              headers: { 'X-Request-Id': header('X-Request-Id'), ...RATE },
              content: {
                // each event's data is a Generation (OpenAPI 3.1 cannot say so of a stream)
                'text/event-stream': { schema: { type: 'string' } },
              },
            },
          },
          errors: [404],
        },
        'get',
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
            { name: 'If-Match', in: 'header', schema: { type: 'string' } },
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
          errors: [404, 409, 410, 412, 416],
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
