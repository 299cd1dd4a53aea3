// A render's copy of a ComfyUI workflow with its bindings set. An input image that is an upload of
// the render's account is sent to the server first (`POST /upload/image`, multipart field `image`,
// answering `{ name, subfolder, type }`, ComfyUI `server.py`), and the node gets the uploaded name, as
// a LoadImage node expects; any other value goes into the graph as it is.
import type { RenderContext } from '../types.ts';
import { call, errorFor, malformed, readJson, type CallOptions } from '../shared/http.ts';

export async function bindWorkflow(
  graph: Record<string, unknown>,
  values: Record<string, unknown>,
  base: string,
  ctx: RenderContext,
  o: CallOptions,
): Promise<Record<string, unknown>> {
  const copy = structuredClone(graph) as Record<string, { inputs: Record<string, unknown> }>;
  for (const [path, value] of Object.entries(values)) {
    const [node, , name] = path.split('.');
    copy[node].inputs[name] = await uploadIfOurs(value, base, ctx, o);
  }
  return copy;
}

async function uploadIfOurs(
  value: unknown,
  base: string,
  ctx: RenderContext,
  o: CallOptions,
): Promise<unknown> {
  if (typeof value !== 'string' || !/^https?:\/\//.test(value)) return value;
  const upload = await ctx.readUpload(value);
  if (!upload) return value;
  const form = new FormData();
  const ext = upload.contentType.split('/')[1] ?? 'png';
  form.append(
    'image',
    new Blob([new Uint8Array(upload.bytes)], { type: upload.contentType }),
    `rendergate-${ctx.attemptId}.${ext}`,
  );
  form.append('overwrite', 'true');
  const res = await call(
    `${base}/upload/image`,
    { method: 'POST', body: form },
    { ...o, what: 'ComfyUI image upload' },
  );
  if (!res.ok) throw await errorFor(res, { ...o, what: 'ComfyUI image upload' });
  const j = (await readJson(res, o)) as { name?: unknown; subfolder?: unknown };
  if (typeof j?.name !== 'string') throw malformed('ComfyUI image upload', 'no name');
  return typeof j.subfolder === 'string' && j.subfolder !== ''
    ? `${j.subfolder}/${j.name}`
    : j.name;
}
