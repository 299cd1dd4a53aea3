// Webhooks of the signed-in account: add an endpoint (its signing secret is shown once, in that answer),
// delete one, and the recent deliveries of each with status, attempts and the last error, with Resend.
// The same WebhookEndpoints service as /v1/webhook-endpoints: same checks, same limits, same rows. The
// page shows the endpoints of both modes, each marked: live ones (the default when adding) and test
// ones, which receive only the events of test keys' renders (those renders are not in History).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { EVENT_TYPES, MAX_ENDPOINTS, type EndpointMode } from '../../services/webhook-endpoints.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import { page } from '../view.ts';
import { field, fields } from '../form-body.ts';
import { sourceOf } from '../../web/audit-source.ts';

/** A delivery as this page shows it. `lastError` comes with the deliveries' last-error column. */
export interface WebhookDeliveryView {
  id: string;
  type: string;
  generationId: string;
  status: string;
  attempts: number;
  lastResponseStatus: number | null;
  createdAt: string;
  nextAttemptAt: string | null;
  lastError?: string | null;
}

const RECENT = 10;

export function registerWebhookRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };
  const webhooksPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    extra: Record<string, unknown> = {},
  ) => {
    const p = req.principal;
    // Every endpoint of both modes: at most MAX_ENDPOINTS of each.
    const endpoints = (await ctx.webhooks.list(p, { limit: 2 * MAX_ENDPOINTS, cursor: null })).data;
    const withDeliveries = await Promise.all(
      endpoints.map(async (e) => ({
        ...e,
        deliveries: (await ctx.webhooks.deliveries(p, e.id, { limit: RECENT, cursor: null }))
          .data as unknown as WebhookDeliveryView[],
      })),
    );
    return page(reply, 'webhooks', req, {
      title: 'Webhooks',
      endpoints: withDeliveries,
      eventTypes: EVENT_TYPES,
      errors: {},
      values: {},
      ...extra,
    });
  };

  app.get('/webhooks', pre, async (req, reply) => webhooksPage(req, reply));

  app.post('/webhooks', pre, async (req, reply) => {
    const url = (field(req.body, 'url') ?? '').trim();
    const events = fields(req.body, 'events');
    const modeRaw = field(req.body, 'mode') ?? 'live';
    if (modeRaw !== 'live' && modeRaw !== 'test')
      return webhooksPage(req, reply.code(400), {
        errors: { mode: 'Choose Live or Test.' },
        values: { url },
      });
    const mode: EndpointMode = modeRaw;
    try {
      const created = await ctx.webhooks.create(
        req.principal,
        { url, ...(events.length ? { events } : {}) },
        mode,
        sourceOf(req),
      );
      // The one time the secret is shown; the page is never cached (page() sets no-store).
      return webhooksPage(req, reply.code(201), { created });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.code === 'INVALID_INPUT') {
        const errors: Record<string, string> = {};
        for (const d of (e.details ?? []) as { field?: string; message?: string }[]) {
          if (d.field === 'url' || d.field === 'events')
            errors[d.field] ??=
              `${d.field === 'url' ? 'The address' : 'Events'} ${d.message ?? 'is invalid'}.`;
        }
        return webhooksPage(req, reply.code(400), { errors, values: { url, mode } });
      }
      if (e.code === 'WEBHOOK_ENDPOINT_LIMIT')
        return webhooksPage(req, reply.code(409), {
          errors: { url: e.message },
          values: { url, mode },
        });
      throw e;
    }
  });

  app.post<{ Params: { id: string } }>('/webhooks/:id/delete', pre, async (req, reply) => {
    await ctx.webhooks.delete(req.principal, req.params.id, sourceOf(req));
    return reply.redirect('/webhooks', 303);
  });

  app.post<{ Params: { id: string } }>(
    '/webhooks/deliveries/:id/resend',
    pre,
    async (req, reply) => {
      const outcome = await ctx.webhooks.resend(req.principal, req.params.id);
      return webhooksPage(req, reply, {
        notice:
          outcome === 'queued'
            ? 'The delivery is being sent again now.'
            : 'This delivery is being sent at this moment; its result appears shortly.',
      });
    },
  );
}
