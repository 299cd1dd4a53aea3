// A model's examples (catalog `examples`): their files (outputs and input images, read once at start and
// served with an ETag) and **Try this**, which fills the model's form with an example's inputs. An
// example image becomes an upload of the person's account (the same Uploads service as the upload
// control), so the form's render uses it exactly as it would a file the person chose.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import type { CompiledModel } from '../../domain/catalog-load.ts';
import type { ModelExample } from '../../domain/catalog.ts';
import { signedIn, type StudioCtx } from '../types.ts';

type ModelParams = { Params: { vendor: string; name: string } };
type ExampleParams = { Params: { vendor: string; name: string; index: string; part?: string } };
type ModelPage = (
  req: FastifyRequest,
  reply: FastifyReply,
  model: CompiledModel,
  o: { values?: Record<string, string>; notice?: string },
) => Promise<unknown>;

interface ServedFile {
  body: Buffer;
  type: string;
  etag: string;
}

const served = (file: string, type: string): ServedFile => {
  const body = fs.readFileSync(file);
  return {
    body,
    type,
    etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`,
  };
};

export function registerExampleRoutes(
  app: FastifyInstance,
  ctx: StudioCtx,
  o: { modelOf: (req: FastifyRequest<ModelParams>) => CompiledModel; modelPage: ModelPage },
) {
  // "<model id>/<index>/<part>" → the file; part is `output` or an input's name.
  const files = new Map<string, ServedFile>();
  for (const m of ctx.catalog.models) {
    (m.examples ?? []).forEach((ex, i) => {
      if ('file' in ex.output)
        files.set(`${m.id}/${i}/output`, served(ex.output.file, ex.output.contentType));
      for (const [name, f] of Object.entries(ex.files))
        files.set(`${m.id}/${i}/${name}`, served(f.file, f.contentType));
    });
  }
  const exampleOf = (
    req: FastifyRequest<ExampleParams>,
  ): { model: CompiledModel; example: ModelExample } => {
    const model = o.modelOf(req);
    const example = /^\d{1,2}$/.test(req.params.index)
      ? model.def.examples?.[Number(req.params.index)]
      : undefined;
    if (!example) throw new ApiError('NOT_FOUND', 'There is no such example.');
    return { model, example };
  };

  // Catalog content, the same for everyone: no session needed, cached by the browser.
  app.get<ExampleParams>('/models/:vendor/:name/examples/:index/:part', async (req, reply) => {
    const f = files.get(
      `${req.params.vendor}/${req.params.name}/${req.params.index}/${req.params.part}`,
    );
    if (!f) throw new ApiError('NOT_FOUND', 'There is no such example file.');
    reply
      .header('etag', f.etag)
      .header('cache-control', 'public, max-age=3600')
      .header('accept-ranges', 'none');
    if (req.headers['if-none-match'] === f.etag) return reply.code(304).send();
    return reply.type(f.type).send(f.body);
  });

  app.post<ExampleParams>(
    '/models/:vendor/:name/examples/:index',
    { preHandler: signedIn(ctx) },
    async (req, reply) => {
      const { model, example } = exampleOf(req);
      const values: Record<string, string> = {};
      for (const f of model.def.fields) {
        if (f.type === 'toggle')
          values[f.name] = String(example.inputs[f.name] ?? f.default ?? false);
        else if (example.inputs[f.name] !== undefined)
          values[f.name] = String(example.inputs[f.name]);
        else if (f.default !== null) values[f.name] = String(f.default);
      }
      for (const [name, f] of Object.entries(example.files)) {
        const made = await ctx.uploads.create(
          req.principal,
          f.contentType,
          files.get(`${model.id}/${req.params.index}/${name}`)!.body,
        );
        values[name] = made.url;
      }
      return o.modelPage(req, reply, model, {
        values,
        notice: `The form holds the example “${example.title ?? 'inputs'}”. Change anything, then press Render.`,
      });
    },
  );
}
