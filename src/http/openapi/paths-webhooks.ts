// The operations of /v1/webhook-endpoints, and Stripe's events at /webhooks/stripe (docs/api.md).
import { json, op, ok, ID, LIST } from './operation.ts';

export function webhookPaths() {
  return {
    '/v1/webhook-endpoints': {
      post: op(
        {
          id: 'createWebhookEndpoint',
          tag: 'Webhooks',
          summary:
            "Add an endpoint of the key's mode (at most 10 live and 10 test endpoints per account).",
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
          summary: "The account's endpoints of the key's mode, without secrets.",
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
          'Verified with the `Stripe-Signature` header over the raw body (300 s tolerance); ' +
          'a body ' +
          'over 64 KiB is a 413, and each address has a budget of requests, taken before the ' +
          'signature is checked (429 past it). A paid `checkout.session.completed` or ' +
          '`checkout.session.async_payment_succeeded` of a session this service created credits ' +
          'the amount it was created with, once; refunds, disputes and a failed payment of a ' +
          'top-up take it back (ledger kind `reversal`), whatever their order (an early one is ' +
          '`kept` and applied with the credit), and a won dispute gives its part back once ' +
          '(`reinstated`). A signed event of an unexpected shape is a 400. Other events change ' +
          'nothing. Answered only once the change is committed. See docs/billing.md.',
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
                    outcome: {
                      enum: [
                        'credited',
                        'duplicate',
                        'ignored',
                        'refused',
                        'reversed',
                        'kept',
                        'reinstated',
                      ],
                    },
                  },
                },
              },
            },
          },
          400: { $ref: '#/components/responses/Error400' },
          404: { $ref: '#/components/responses/Error404' },
          413: { $ref: '#/components/responses/Error413' },
          429: { $ref: '#/components/responses/Error429' },
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
