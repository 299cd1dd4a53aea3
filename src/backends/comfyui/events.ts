// Following one prompt on a ComfyUI server's websocket (`/ws?clientId=…`, ComfyUI `server.py`
// send_sync and `execution.py`; `script_examples/websockets_api_example.py` waits the same way): JSON
// frames `{ type, data }`; `progress { value, max, prompt_id }` while a node runs; `executing { node:
// null, prompt_id }` or `execution_success` when the prompt is done; `execution_error` and
// `execution_interrupted` when it is not. Binary frames are previews, ignored.
import WebSocket from 'ws';
import { textOf } from '../shared/driver.ts';

export type PromptEnd =
  | { kind: 'done' }
  | { kind: 'error'; message: string }
  | { kind: 'interrupted' }
  | { kind: 'disconnected' };

/** Opens the websocket; resolves once it is open (so no event of a prompt queued after it is missed). */
/** Frames are bounded (`maxPayload`, 8 MiB: progress JSON and preview images); a larger one closes the socket. */
export function openSocket(
  base: string,
  clientId: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<WebSocket> {
  const url = `${base.replace(/^http/, 'ws')}/ws?clientId=${encodeURIComponent(clientId)}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { handshakeTimeout: timeoutMs, maxPayload: 8 * 1024 * 1024 });
    const onAbort = () => {
      ws.terminate();
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    ws.once('open', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(ws);
    });
    ws.once('error', (e) => {
      signal.removeEventListener('abort', onAbort);
      reject(e);
    });
  });
}

/** Resolves with how prompt `promptId` ended, or `disconnected` when the socket closed first. */
export function followPrompt(
  ws: WebSocket,
  promptId: string,
  progress: (fraction: number) => void,
): Promise<PromptEnd> {
  return new Promise((resolve) => {
    const finish = (end: PromptEnd) => {
      ws.removeAllListeners('message');
      resolve(end);
    };
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return;
      let msg: { type?: string; data?: Record<string, unknown> };
      try {
        msg = JSON.parse((raw as Buffer).toString('utf8')) as typeof msg; // text frames arrive as a Buffer
      } catch {
        return;
      }
      const d = msg.data ?? {};
      if (d.prompt_id !== promptId) return;
      if (
        msg.type === 'progress' &&
        typeof d.value === 'number' &&
        typeof d.max === 'number' &&
        d.max > 0
      )
        progress(Math.min(0.99, d.value / d.max));
      else if ((msg.type === 'executing' && d.node === null) || msg.type === 'execution_success')
        finish({ kind: 'done' });
      else if (msg.type === 'execution_error')
        finish({
          kind: 'error',
          message: textOf(d.exception_message ?? d.exception_type ?? 'no reason given'),
        });
      else if (msg.type === 'execution_interrupted') finish({ kind: 'interrupted' });
    });
    ws.once('close', () => finish({ kind: 'disconnected' }));
    ws.once('error', () => ws.terminate());
  });
}
