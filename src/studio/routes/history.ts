// History: the account's live generations (the API's as well as the studio's), newest first, with live
// status until final, then the video, image or text; Download, Cancel, Delete; and the same request for
// the API. Test keys' renders are not shown, here or on any page a link of History leads to (the
// studio acts live, as the keys page says), so no link of the studio leads to one.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { sendContent } from '../../web/content.ts';
import { admitted, refuseSpent, SESSION_COOKIE, signedIn, type StudioCtx } from '../types.ts';
import { fragment, page } from '../view.ts';
import { apiSnippets } from '../snippets.ts';
import { HISTORY_STATUSES } from '../../services/history.ts';
import { plainError, timings } from '../presenters.ts';
import { progressView } from '../progress.ts';
import type { Principal } from '../../domain/principal.ts';
import { renderTitle, shownInputs } from '../render-page.ts';
import { eventStreams, sendEventStream } from '../../web/event-stream.ts';

type IdParams = { Params: { id: string } };
const PAGE = 20;

type Row = { modelId?: unknown; status?: unknown; startedAt?: unknown; progress?: unknown };

/**
 * The rows' progress, with the typical time of their model read only for a running render whose
 * backend has reported no rate (progressView): most pages have none and read nothing more.
 */
async function progressOf(ctx: StudioCtx, p: Principal, rows: Row[]) {
  const typical = new Map<string, number | null>();
  for (const g of rows) {
    const model = g.modelId as string;
    const running = g.status === 'queued' && typeof g.startedAt === 'string';
    const rated = typeof g.progress === 'number' && g.progress >= 0.03;
    if (running && !rated && !typical.has(model))
      typical.set(model, await ctx.history.typicalSeconds(p, model));
  }
  const now = Date.now();
  return (g: Row) => progressView(g, typical.get(g.modelId as string) ?? null, now);
}

export function registerHistoryRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const pre = { preHandler: signedIn(ctx) };
  const one = async (req: FastifyRequest<IdParams>) =>
    JSON.parse(await ctx.generations.getJson(req.principal, req.params.id)) as Record<
      string,
      unknown
    >;

  type HistoryQuery = {
    Querystring: { cursor?: string; created?: string; model?: string; status?: string };
  };
  // The session is read with the page, in one statement (services/history.ts), and then admitted as
  // signedIn() admits it: a page view is one round trip to the database instead of two. A session
  // already over its limit is refused first, without reading anything.
  app.get<HistoryQuery>('/history', async (req, reply) => {
    await refuseSpent(ctx, req);
    const cursor =
      typeof req.query.cursor === 'string' && req.query.cursor !== '' ? req.query.cursor : null;
    // Filters: a model of the catalog and a status, else none (an unknown value shows everything).
    const modelId =
      typeof req.query.model === 'string' && ctx.catalog.get(req.query.model)
        ? req.query.model
        : null;
    const status = (HISTORY_STATUSES as readonly string[]).includes(req.query.status ?? '')
      ? req.query.status!
      : null;
    let list;
    try {
      const q = { limit: PAGE, cursor, status, modelId };
      const read = await ctx.sessions.findWith(
        req.cookies[SESSION_COOKIE],
        'account',
        (h, idle) => ctx.history.listOfSession(h, idle, q),
        (s) => ctx.history.list(s.principal, q),
      );
      req.studio = read.session;
      list = read.value;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'INVALID_INPUT')
        return reply.redirect('/history', 303);
      throw e;
    }
    // No live session: the redirect to sign in (and no page was read). Over the limit: a 429.
    const refused = await admitted(ctx, req, reply);
    if (refused) return refused;
    if (!list) throw new Error('a live session without its page'); // findWith() reads both or neither
    const filters = { ...(modelId ? { model: modelId } : {}), ...(status ? { status } : {}) };
    const more =
      list.nextCursor === null
        ? null
        : `/history?${new URLSearchParams({ ...filters, cursor: list.nextCursor })}`;
    // Past the first page: the way back to the newest renders, with the same filters.
    const newest =
      cursor === null ? null : `/history?${new URLSearchParams(filters)}`.replace(/\?$/, '');
    return page(reply, 'history', req, {
      title: 'History',
      items: list.data,
      newest,
      progressOf: await progressOf(ctx, req.principal, list.data),
      more,
      created: req.query.created ?? null,
      models: ctx.catalog,
      filter: { modelId, status },
      statuses: HISTORY_STATUSES,
      plainError,
    });
  });

  // One row, for the script that follows a queued render until it is final.
  // The balance rides along, so that the header follows a refund.
  // `?full`: the row of the render's own page, with its player.
  app.get<IdParams & { Querystring: { full?: string } }>(
    '/history/:id/row',
    pre,
    async (req, reply) => {
      const g = {
        ...(await one(req)),
        source: await ctx.history.source(req.principal, req.params.id),
      };
      const headed = reply.header('x-balance-cents', String(req.studio!.balanceCents));
      return fragment(headed, 'history-row', {
        items: [g],
        full: req.query.full !== undefined,
        csrf: reply.generateCsrf(),
        models: ctx.catalog,
        plainError,
        progressOf: await progressOf(ctx, req.principal, [g as Row]),
      });
    },
  );

  // The render's live events, for the pages' EventSource (the API's stream, with the session's
  // member as who reads): the script fetches the row again at each event.
  const open = eventStreams(app);
  app.get<IdParams>('/history/:id/events', pre, async (req, reply) => {
    const stream = await ctx.generations.events(
      req.principal,
      req.params.id,
      req.headers['last-event-id'],
    );
    await sendEventStream(req, reply, stream, { keepAliveMs: ctx.config.eventKeepAliveMs, open });
  });

  app.get<IdParams>('/history/:id', pre, async (req, reply) => {
    const g: Record<string, unknown> = {
      ...(await one(req)),
      source: await ctx.history.source(req.principal, req.params.id),
    };
    const card = ctx.cards.get(g.modelId as string);
    return page(reply, 'generation', req, {
      title: renderTitle(card?.def.name ?? (g.modelId as string), g.inputs),
      g,
      models: ctx.catalog,
      plainError,
      progressOf: await progressOf(ctx, req.principal, [g]),
      card,
      inputs: shownInputs(g, card, `${ctx.config.publicUrl}/v1/uploads/`),
      times: timings(g),
      snippets: apiSnippets(
        ctx.config.publicUrl,
        g.modelId as string,
        g.inputs as Record<string, unknown>,
      ),
    });
  });

  // The file, with Range (seeking in the player), ETag and the same answers as /v1/…/content.
  app.get<IdParams & { Querystring: { download?: string } }>(
    '/history/:id/content',
    pre,
    async (req, reply) => {
      const c = await ctx.generations.content(req.principal, req.params.id);
      if (req.query.download !== undefined) {
        const ext = c.contentType.split('/')[1]?.replace(/[^a-z0-9]/g, '') || 'bin';
        reply.header('content-disposition', `attachment; filename="${req.params.id}.${ext}"`);
      }
      return sendContent(req, reply, ctx.storage, c);
    },
  );

  app.post<IdParams>('/history/:id/cancel', pre, async (req, reply) => {
    await ctx.generations.cancel(req.principal, req.params.id);
    return reply.redirect(`/history#${req.params.id}`, 303);
  });

  app.post<IdParams>('/history/:id/delete', pre, async (req, reply) => {
    await ctx.generations.delete(req.principal, req.params.id);
    return reply.redirect('/history', 303);
  });
}
