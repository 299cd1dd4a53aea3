// The operations of /v1 that read the reference, the account and the models, and the quote (docs/api.md).
import { json, header, op, ok } from './operation.ts';

export function modelPaths() {
  return {
    '/v1/openapi.json': {
      get: op(
        {
          id: 'getOpenApi',
          tag: 'Reference',
          public: true,
          summary: 'This document (no key needed; any origin may read it).',
          ok: {
            200: {
              description: 'The OpenAPI 3.1 document.',
              headers: {
                'X-Request-Id': header('X-Request-Id'),
                'Access-Control-Allow-Origin': { required: true, schema: { const: '*' } },
              },
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
  };
}
