// A fake ComfyUI server, after Comfy-Org/ComfyUI `server.py` (routes), `execution.py` (the events a
// prompt sends) and `script_examples/websockets_api_example.py` (how a client follows a prompt):
// - `POST /prompt` `{ prompt, client_id, prompt_id? }` → `{ prompt_id, number, node_errors: {} }`; a graph
//   with a node of an unknown class → 400 `{ error: { type: "invalid_prompt", message, details }, node_errors }`.
// - websocket `/ws?clientId=…`: `{ type: "status" }` on connect; for the prompt: `execution_start`,
//   `executing { node }`, `progress { value, max, prompt_id, node }`, `executed`, then
//   `executing { node: null, prompt_id }` and `execution_success`; or `execution_error
//   { prompt_id, exception_message }`; or `execution_interrupted`. Events go to the prompt's client only.
// - `GET /history/{id}` → `{}` until done, then `{ [id]: { prompt, outputs: { [node]: { images: [{ filename,
//   subfolder, type }] } }, status: { status_str, completed, messages } } }`.
// - `GET /view?filename&subfolder&type` → the file (content type from its name); `POST /upload/image`
//   (multipart `image`) → `{ name, subfolder, type: "input" }`.
// - `POST /interrupt` (optional `{ prompt_id }`), `POST /queue { delete: [ids] }`, `GET /system_stats`.
import crypto from 'node:crypto';
import type http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { listen, send, sleep } from './http-util.ts';

export type ComfyBehaviour =
  { kind: 'ok' } | { kind: 'error' } | { kind: 'hang' } | { kind: 'drop-socket' } | { kind: 'png' };

export interface ComfyFake {
  base: string;
  output: Buffer;
  script: ComfyBehaviour[];
  prompts: { id: string; graph: any; clientId: string }[];
  interrupts: (string | null)[];
  deletes: string[];
  uploads: { name: string; bytes: number }[];
  healthy: boolean;
  close: () => Promise<void>;
}

async function rawBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function comfyFake(
  opts: { steps?: number; stepMs?: number } = {},
): Promise<ComfyFake> {
  const sockets = new Map<string, WebSocket>();
  const history = new Map<string, unknown>();
  const interrupted = new Set<string>();
  const files = new Map<string, { bytes: Buffer; type: string }>();
  const fake = {
    output: crypto.randomBytes(8192),
    script: [] as ComfyBehaviour[],
    prompts: [] as ComfyFake['prompts'],
    interrupts: [] as (string | null)[],
    deletes: [] as string[],
    uploads: [] as ComfyFake['uploads'],
    healthy: true,
  } as ComfyFake;
  const emit = (clientId: string, type: string, data: Record<string, unknown>) =>
    sockets.get(clientId)?.send(JSON.stringify({ type, data }));

  async function execute(id: string, clientId: string, b: ComfyBehaviour) {
    emit(clientId, 'execution_start', { prompt_id: id, timestamp: Date.now() });
    emit(clientId, 'executing', { node: '3', display_node: '3', prompt_id: id });
    const steps = opts.steps ?? 4;
    for (let i = 1; i <= steps || b.kind === 'hang'; i++) {
      if (interrupted.has(id)) {
        emit(clientId, 'execution_interrupted', {
          prompt_id: id,
          node_id: '3',
          node_type: 'KSampler',
          executed: [],
        });
        history.set(id, {
          prompt: [],
          outputs: {},
          status: {
            status_str: 'error',
            completed: false,
            messages: [['execution_interrupted', {}]],
          },
        });
        return;
      }
      await sleep(opts.stepMs ?? 20);
      emit(clientId, 'progress', {
        value: Math.min(i, steps),
        max: steps,
        prompt_id: id,
        node: '3',
      });
      if (b.kind === 'drop-socket' && i === 1) sockets.get(clientId)?.terminate();
    }
    if (b.kind === 'error') {
      emit(clientId, 'execution_error', {
        prompt_id: id,
        node_id: '3',
        node_type: 'KSampler',
        exception_message: 'Expected all tensors to be on the same device',
        exception_type: 'RuntimeError',
        traceback: [],
      });
      history.set(id, {
        prompt: [],
        outputs: {},
        status: { status_str: 'error', completed: false, messages: [] },
      });
      return;
    }
    const name = `ComfyUI_${id.slice(0, 8)}_.${b.kind === 'png' ? 'png' : 'mp4'}`;
    files.set(name, { bytes: fake.output, type: b.kind === 'png' ? 'image/png' : 'video/mp4' });
    const outputs = {
      9: { images: [{ filename: name, subfolder: '', type: 'output' }] },
      4: { text: ['ignored'] },
    };
    emit(clientId, 'executed', { node: '9', display_node: '9', output: outputs[9], prompt_id: id });
    history.set(id, {
      prompt: [],
      outputs,
      status: { status_str: 'success', completed: true, messages: [] },
    });
    emit(clientId, 'executing', { node: null, prompt_id: id });
    emit(clientId, 'execution_success', { prompt_id: id, timestamp: Date.now() });
  }

  const { server, base, close } = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const route = `${req.method} ${url.pathname}`;
    if (route === 'POST /prompt') {
      return void rawBody(req).then((raw) => {
        const body = JSON.parse(raw.toString());
        const bad = Object.entries(body.prompt ?? {}).find(
          ([, n]: [string, any]) => n.class_type === 'NoSuchNode',
        );
        if (bad)
          return send(res, 400, {
            error: {
              type: 'invalid_prompt',
              message: 'Cannot execute because a node is missing the class_type property.',
              details: `Node ID '#${bad[0]}'`,
            },
            node_errors: {},
          });
        const id = body.prompt_id ?? crypto.randomUUID();
        fake.prompts.push({ id, graph: body.prompt, clientId: body.client_id });
        send(res, 200, { prompt_id: id, number: fake.prompts.length, node_errors: {} });
        void execute(id, body.client_id, fake.script.shift() ?? { kind: 'ok' });
      });
    }
    const h = /^\/history\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && h) {
      const id = decodeURIComponent(h[1]);
      return send(res, 200, history.has(id) ? { [id]: history.get(id) } : {});
    }
    if (route === 'GET /view') {
      const f = files.get(url.searchParams.get('filename') ?? '');
      if (!f || url.searchParams.get('type') !== 'output') return send(res, 404, {});
      res.writeHead(200, {
        'content-type': f.type,
        'content-length': f.bytes.length,
        'content-disposition': `filename="${url.searchParams.get('filename')}"`,
      });
      return res.end(f.bytes);
    }
    if (route === 'POST /upload/image') {
      return void rawBody(req).then((raw) => {
        const name = /filename="([^"]+)"/.exec(raw.toString('latin1'))?.[1] ?? 'image.png';
        fake.uploads.push({ name, bytes: raw.length });
        send(res, 200, { name, subfolder: '', type: 'input' });
      });
    }
    if (route === 'POST /interrupt') {
      return void rawBody(req).then((raw) => {
        const id = raw.length ? (JSON.parse(raw.toString()).prompt_id ?? null) : null;
        fake.interrupts.push(id);
        for (const p of fake.prompts) if (id === null || p.id === id) interrupted.add(p.id);
        res.writeHead(200).end();
      });
    }
    if (route === 'POST /queue') {
      return void rawBody(req).then((raw) => {
        fake.deletes.push(...(JSON.parse(raw.toString()).delete ?? []));
        res.writeHead(200).end();
      });
    }
    if (route === 'GET /system_stats') {
      if (!fake.healthy) return void req.socket.destroy();
      return send(res, 200, {
        system: { os: 'posix', comfyui_version: '0.3.0', python_version: '3.12' },
        devices: [{ name: 'cuda:0', type: 'cuda', vram_total: 1, vram_free: 1 }],
      });
    }
    send(res, 404, {});
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (ws, req) => {
    const clientId =
      new URL(req.url ?? '/', 'http://x').searchParams.get('clientId') ?? crypto.randomUUID();
    sockets.set(clientId, ws);
    ws.on('close', () => {
      if (sockets.get(clientId) === ws) sockets.delete(clientId);
    });
    ws.send(
      JSON.stringify({
        type: 'status',
        data: { status: { exec_info: { queue_remaining: 0 } }, sid: clientId },
      }),
    );
  });
  fake.base = base;
  fake.close = async () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
    await close();
  };
  return fake;
}
