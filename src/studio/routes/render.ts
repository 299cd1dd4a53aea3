// Rendering from the studio: a model's page (its form, the live price) and Render, which goes through the
// API's own create path (Generations.create: same price, charge, ledger entry, generation and
// idempotency record), paid by the account without a key. Each form carries its own idempotency key, so
// a double click or a resubmitted page makes one render and one charge.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { parseRenderRequest } from '../../domain/inputs.ts';
import { priceOf } from '../../domain/pricing.ts';
import type { CompiledModel } from '../../domain/catalog-load.ts';
import { signedIn, type StudioCtx } from '../types.ts';
import type { Principal } from '../../domain/principal.ts';
import { euros, page } from '../view.ts';
import { field } from '../form-body.ts';
import { zeroHelp } from '../zero-help.ts';
import { fieldErrors, formFields, formInputs, formValues } from '../model-form.ts';
import { registerExampleRoutes } from './examples.ts';

type ModelParams = { Params: { vendor: string; name: string } };
const IDEM = /^[0-9a-f-]{36}$/;
/** How long a second submit of the same form waits for the first one to commit. */
const IN_USE_WAIT_MS = 10_000;

/** The balance refusal with money written as everywhere in the studio. */
function shortOf(e: ApiError): string {
  const d = (e.details?.[0] ?? {}) as { costCents?: number; balanceCents?: number };
  if (typeof d.costCents !== 'number' || typeof d.balanceCents !== 'number')
    return `${e.message} Ask the operator for credit.`;
  return `This render costs ${euros(d.costCents)} and the balance is ${euros(d.balanceCents)}. Ask the operator for credit.`;
}

export function registerRenderRoutes(app: FastifyInstance, ctx: StudioCtx) {
  const modelOf = (req: FastifyRequest<ModelParams>): CompiledModel => {
    const m = ctx.catalog.get(`${req.params.vendor}/${req.params.name}`);
    if (!m) throw new ApiError('MODEL_NOT_FOUND', 'There is no such model.');
    return m;
  };
  /** The API's quote for the form (uploads checked as POST /v1/quote does), or null when the inputs are not valid yet. */
  const quote = async (p: Principal, model: CompiledModel, body: unknown) => {
    try {
      const { inputs } = parseRenderRequest(ctx.catalog, {
        modelId: model.id,
        inputs: formInputs(model.def, body),
      });
      await ctx.generations.checkUploads(p, model, inputs);
      return { costCents: priceOf(model, inputs), errors: {} };
    } catch (e) {
      if (e instanceof ApiError && e.code === 'INVALID_INPUT')
        return { costCents: null, errors: fieldErrors(e.details) };
      throw e;
    }
  };
  const modelPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    model: CompiledModel,
    o: {
      values?: Record<string, string>;
      errors?: Record<string, string>;
      error?: string;
      notice?: string;
      idem?: string;
    } = {},
  ) => {
    const defaults = Object.fromEntries(
      model.def.fields.filter((f) => f.default !== null).map((f) => [f.name, String(f.default)]),
    );
    const values = o.values ?? defaults;
    // A required field still empty (every page's first view): no price yet, and no error built to say so.
    const incomplete = model.def.fields.some((f) => f.required && !(values[f.name] ?? '').trim());
    const price = incomplete ? null : (await quote(req.principal, model, values)).costCents;
    return page(reply, 'model', req, {
      title: model.def.name,
      zero: zeroHelp(ctx),
      model: model.def,
      card: ctx.cards.get(model.id),
      fields: formFields(model.def, o.values ?? null, o.errors ?? {}),
      price,
      error: o.error,
      notice: o.notice,
      idem: o.idem ?? crypto.randomUUID(),
      uploadPrefix: `${ctx.config.publicUrl}/v1/uploads/`,
    });
  };

  app.get<ModelParams>('/models/:vendor/:name', { preHandler: signedIn(ctx) }, async (req, reply) =>
    modelPage(req, reply, modelOf(req)),
  );
  registerExampleRoutes(app, ctx, { modelOf, modelPage });

  // The live price as the form changes: the same quote code as POST /v1/quote.
  app.post<ModelParams>(
    '/models/:vendor/:name/quote',
    { preHandler: signedIn(ctx) },
    async (req, reply) => {
      const q = await quote(req.principal, modelOf(req), req.body);
      return reply
        .header('cache-control', 'no-store')
        .send({ ...q, price: q.costCents === null ? null : euros(q.costCents) });
    },
  );

  app.post<ModelParams>(
    '/models/:vendor/:name',
    { preHandler: signedIn(ctx) },
    async (req, reply) => {
      const model = modelOf(req);
      const values = formValues(model.def, req.body);
      const idem = field(req.body, '_idem') ?? '';
      if (!IDEM.test(idem))
        return modelPage(req, reply.code(400), model, {
          values,
          error: 'This form is incomplete; reload the page and try again.',
        });
      const body = { modelId: model.id, inputs: formInputs(model.def, req.body) };
      for (const until = Date.now() + IN_USE_WAIT_MS; ;) {
        try {
          const made = await ctx.generations.create(req.principal, body, `studio:${idem}`);
          return reply.redirect(`/history?created=${made.body.id as string}`, 303);
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          // The same form sent twice at once: the second waits for the first, then is its replay.
          if (e.code === 'IDEMPOTENCY_KEY_IN_USE' && Date.now() < until) {
            await new Promise((r) => setTimeout(r, 100));
            continue;
          }
          if (e.code === 'INVALID_INPUT')
            return modelPage(req, reply.code(400), model, {
              values,
              errors: fieldErrors(e.details),
              error: 'Some fields need attention.',
              idem,
            });
          if (e.code === 'INSUFFICIENT_BALANCE')
            return modelPage(req, reply.code(402), model, { values, error: shortOf(e), idem });
          if (e.code === 'IDEMPOTENCY_KEY_REUSED')
            return modelPage(req, reply.code(409), model, {
              values,
              error:
                'This form was already used for another render. Check History, then press Render again to make a new one.',
            });
          throw e;
        }
      }
    },
  );
}
