// A ComfyUI server (Comfy-Org/ComfyUI `server.py`, `execution.py`, `script_examples/
// websockets_api_example.py`). The model's API-format workflow is loaded at catalog load; each render
// copies it, sets each `bindings` path ("<node>.inputs.<name>") to its CEL value, and queues it with
// `POST /prompt` under the attempt's own prompt id. Completion and progress come from the `/ws`
// websocket; if it drops, the driver reconnects and asks `GET /history/{id}` whether the prompt ended
// meanwhile. The output is the first file of `outputNode` (or of any node) in the history, fetched
// from `/view`. Cancel: `POST /queue {delete}` for a prompt still waiting, `POST /interrupt
// {prompt_id}` for the running one. Health: `GET /system_stats`.
import crypto from 'node:crypto';
import type WebSocket from 'ws';
import type { CompiledModel } from '../../domain/catalog-load.ts';
import { RenderError, type RenderContext, type RenderOutput } from '../types.ts';
import {
  call,
  errorFor,
  malformed,
  networkError,
  readJson,
  withRetries,
  type CallOptions,
} from '../shared/http.ts';
import { saveOutput } from '../shared/output.ts';
import {
  serverOf,
  timeLeft,
  originOf,
  type DriverDeps,
  type RemoteBackend,
} from '../shared/driver.ts';
import { followPrompt, openSocket, type PromptEnd } from './events.ts';
import type { ComfyBinding } from './catalog.ts';
import { bindWorkflow } from './workflow.ts';

type FileRef = { filename: string; subfolder?: string; type?: string };
type History = Record<
  string,
  {
    outputs?: Record<string, Record<string, unknown>>;
    status?: { status_str?: string; completed?: boolean; messages?: unknown[] };
  }
>;

export function createComfyBackend(
  model: CompiledModel,
  b: ComfyBinding,
  deps: DriverDeps,
): RemoteBackend {
  const redact = (t: string) => deps.secrets.redact(t);
  const json = { 'content-type': 'application/json' };

  async function history(
    base: string,
    id: string,
    o: CallOptions,
  ): Promise<History[string] | null> {
    const res = await call(`${base}/history/${encodeURIComponent(id)}`, {}, o);
    if (!res.ok) throw await errorFor(res, o);
    const h = (await readJson(res, o, 8 * 1024 * 1024)) as History; // one prompt's history: small
    return h?.[id] ?? null;
  }

  /** Waits for the prompt's end on the websocket, reconnecting and consulting /history when it drops. */
  async function waitForEnd(
    base: string,
    clientId: string,
    id: string,
    sockets: Set<WebSocket>,
    ctx: RenderContext,
    until: number,
  ): Promise<PromptEnd> {
    let socket: WebSocket | null = [...sockets][0] ?? null;
    for (;;) {
      const end = socket
        ? await followPrompt(socket, id, ctx.progress)
        : { kind: 'disconnected' as const };
      if (end.kind !== 'disconnected') return end;
      if (ctx.signal.aborted)
        throw new RenderError('RENDER_ABORTED', 'The render was stopped.', true);
      if (Date.now() >= until)
        throw new RenderError(
          'BACKEND_TIMEOUT',
          'The ComfyUI prompt did not finish in time.',
          true,
        );
      await new Promise((r) => setTimeout(r, 250));
      socket = await openSocket(base, clientId, ctx.signal, 5_000).catch(() => null);
      if (socket) sockets.add(socket); // closed by run() however the wait ends
      if (Date.now() >= until || ctx.signal.aborted) {
        socket?.terminate();
        throw new RenderError(
          'BACKEND_TIMEOUT',
          'The ComfyUI prompt did not finish in time.',
          true,
        );
      }
      // Whatever happened while the socket was down is in the history.
      const h = await history(base, id, {
        signal: ctx.signal,
        timeoutMs: 5_000,
        redact,
        what: 'ComfyUI history',
      }).catch(() => null);
      if (h?.status?.completed || h?.status?.status_str === 'success') {
        socket?.terminate();
        return { kind: 'done' };
      }
      if (h?.status?.status_str === 'error') {
        socket?.terminate();
        return { kind: 'error', message: "the prompt failed (see the server's history)" };
      }
    }
  }

  function firstFile(outputs: Record<string, Record<string, unknown>>): FileRef | null {
    const nodes = b.outputNode ? [b.outputNode] : Object.keys(outputs);
    for (const node of nodes) {
      // SaveImage lists `images`; video and animation nodes use other keys (`gifs`, `videos`, …).
      for (const list of Object.values(outputs[node] ?? {})) {
        if (!Array.isArray(list)) continue;
        const f = list.find(
          (x) => typeof x === 'object' && x !== null && typeof (x as FileRef).filename === 'string',
        ) as FileRef | undefined;
        if (f) return f;
      }
    }
    return null;
  }

  return {
    async run(inputs, ctx): Promise<RenderOutput> {
      const base = serverOf(b.urls, ctx);
      const until = Date.now() + ctx.timeLimitSeconds * 1000;
      const o: CallOptions = {
        signal: ctx.signal,
        timeoutMs: 30_000,
        redact,
        what: 'ComfyUI prompt',
      };
      const id = crypto.randomUUID(); // ComfyUI keys its queue and history by prompt ids of this form
      const clientId = `rendergate-${ctx.attemptId}`;
      const cancel = () => {
        const opts = { method: 'POST', headers: json, signal: AbortSignal.timeout(5_000) };
        void fetch(`${base}/queue`, { ...opts, body: JSON.stringify({ delete: [id] }) }).then(
          (r) => r.body?.cancel(),
          () => undefined,
        );
        void fetch(`${base}/interrupt`, { ...opts, body: JSON.stringify({ prompt_id: id }) }).then(
          (r) => r.body?.cancel(),
          () => undefined,
        );
      };
      const sockets = new Set<WebSocket>();
      let timer: NodeJS.Timeout | undefined;
      let queued = false;
      ctx.signal.addEventListener('abort', cancel, { once: true });
      const t0 = performance.now();
      try {
        const graph = await bindWorkflow(
          b.graph,
          model.backendCel.bindings?.evaluate(inputs) ?? {},
          base,
          ctx,
          o,
        );
        sockets.add(
          await openSocket(base, clientId, ctx.signal, 10_000).catch((e) => {
            throw networkError(e, { ...o, what: 'ComfyUI websocket' });
          }),
        );
        await withRetries(
          async () => {
            const res = await call(
              `${base}/prompt`,
              {
                method: 'POST',
                headers: json,
                body: JSON.stringify({ prompt: graph, client_id: clientId, prompt_id: id }),
              },
              o,
            );
            if (!res.ok) throw await errorFor(res, o, [503]);
            await res.body?.cancel();
          },
          { signal: ctx.signal, tries: 4, until },
        );
        queued = true;
        const end = await Promise.race([
          waitForEnd(base, clientId, id, sockets, ctx, until),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () =>
                reject(
                  new RenderError(
                    'BACKEND_TIMEOUT',
                    'The ComfyUI prompt did not finish in time.',
                    true,
                  ),
                ),
              timeLeft(until),
            );
          }),
        ]);
        if (end.kind === 'error')
          throw new RenderError(
            'MODEL_FAILED',
            `The workflow failed: ${redact(end.message).slice(0, 300)}`,
            false,
          );
        if (end.kind === 'interrupted')
          throw new RenderError(
            'BACKEND_CANCELLED',
            'The ComfyUI server interrupted the prompt.',
            true,
          );
        const h = await history(base, id, { ...o, what: 'ComfyUI history' });
        if (h?.status?.status_str === 'error')
          throw new RenderError('MODEL_FAILED', 'The workflow failed.', false);
        const file = h?.outputs ? firstFile(h.outputs) : null;
        if (!file)
          throw malformed(
            'ComfyUI history',
            b.outputNode ? `no file from node ${b.outputNode}` : 'no output file',
          );
        const q = new URLSearchParams({
          filename: file.filename,
          subfolder: file.subfolder ?? '',
          type: file.type ?? 'output',
        });
        return await saveOutput(`${base}/view?${q}`, {
          workDir: ctx.workDir,
          contentType: model.def.output.type === 'file' ? model.def.output.contentType : '',
          limitBytes: deps.outputLimitBytes,
          origin: originOf(base),
          allowPrivate: deps.allowPrivateUrls,
          signal: ctx.signal,
          timeoutMs: timeLeft(until),
          redact,
          what: 'ComfyUI output',
        });
      } catch (e) {
        if (
          queued &&
          !ctx.signal.aborted &&
          !(e instanceof RenderError && e.code === 'MODEL_FAILED')
        )
          cancel();
        if (e instanceof RenderError && !ctx.signal.aborted)
          deps.metrics.backendErrors.inc({ driver: 'comfyui', code: e.code });
        throw e;
      } finally {
        ctx.signal.removeEventListener('abort', cancel);
        clearTimeout(timer);
        for (const ws of sockets) ws.terminate();
        deps.metrics.backendRequest.observe(
          { driver: 'comfyui', kind: 'prompt' },
          (performance.now() - t0) / 1000,
        );
      }
    },

    async probe(url, signal) {
      const res = await fetch(`${url}/system_stats`, { signal });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`GET /system_stats answered ${res.status}`);
    },
  };
}
