// A fake of fal's queue API, after fal-ai/fal-js `libs/client/src/queue.ts` (submit, status, result,
// cancel; the status and result paths drop the app id's subpath) and docs.fal.ai "Queue":
// - `POST /{owner}/{app}[/{path}]` body = input, `Authorization: Key <key>` → `{ request_id, response_url,
//   status_url, cancel_url, queue_position }`.
// - `GET /{owner}/{app}/requests/{id}/status?logs=1` → `{ status: "IN_QUEUE", queue_position }` then
//   `{ status: "IN_PROGRESS", logs: [{ message, level, source, timestamp }] }` then `{ status: "COMPLETED", logs }`.
// - `GET /{owner}/{app}/requests/{id}` → the result, e.g. `{ video: { url, content_type, file_size } }`;
//   a failed request answers it with an error status and `{ detail }`.
// - `PUT /{owner}/{app}/requests/{id}/cancel` → 202 `{ status: "CANCELLATION_REQUESTED" }`.
import crypto from 'node:crypto';
import { listen, readBody, send } from './http-util.ts';

export type FalBehaviour =
  | { kind: 'ok' }
  | { kind: 'fail' }
  | { kind: 'hang' }
  | { kind: 'queued'; polls: number }
  | { kind: 'throttled' };

export interface FalFake {
  base: string;
  key: string;
  output: Buffer;
  /** When set, a result is `{ output: textOutput }` (a text model's) instead of a file. */
  textOutput: string | null;
  script: FalBehaviour[];
  submitted: { id: string; path: string; input: any }[];
  statusPaths: string[];
  positions: number[];
  cancels: string[];
  close: () => Promise<void>;
}

export async function falFake(): Promise<FalFake> {
  const reqs = new Map<string, { b: FalBehaviour; polls: number; cancelled: boolean }>();
  const fake = {
    key: 'fal-key-id:fal-key-secret',
    output: crypto.randomBytes(5000),
    textOutput: null,
    script: [],
    submitted: [],
    statusPaths: [],
    positions: [],
    cancels: [],
  } as unknown as FalFake;
  const { base, close } = await listen(
    (req, res) =>
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (url.pathname.startsWith('/files/')) {
          res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': fake.output.length });
          return res.end(fake.output);
        }
        if (req.headers.authorization !== `Key ${fake.key}`)
          return send(res, 401, { detail: 'Unauthorized' });
        const m = /^\/([^/]+)\/([^/]+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(url.pathname);
        if (m) {
          const rec = reqs.get(m[3]);
          if (!rec) return send(res, 404, { detail: 'Request not found' });
          if (m[4] === '/cancel' && req.method === 'PUT') {
            rec.cancelled = true;
            fake.cancels.push(m[3]);
            return send(res, 202, { status: 'CANCELLATION_REQUESTED' });
          }
          if (m[4] === '/status') {
            fake.statusPaths.push(url.pathname);
            rec.polls++;
            const queuedFor = rec.b.kind === 'queued' ? rec.b.polls : 1;
            if (rec.polls <= queuedFor) {
              fake.positions.push(queuedFor - rec.polls);
              return send(res, 200, {
                status: 'IN_QUEUE',
                queue_position: queuedFor - rec.polls,
                response_url: `${base}${url.pathname.replace('/status', '')}`,
              });
            }
            const logs = [
              {
                message: `${Math.min(100, (rec.polls - queuedFor) * 50)}%|█████     | ${rec.polls - queuedFor}/2 [00:01<00:01]`,
                level: 'INFO',
                source: 'stdout',
                timestamp: new Date().toISOString(),
              },
            ];
            if (rec.b.kind === 'hang' || rec.polls < queuedFor + 2)
              return send(res, 200, { status: 'IN_PROGRESS', logs });
            return send(res, 200, {
              status: 'COMPLETED',
              logs,
              response_url: `${base}${url.pathname.replace('/status', '')}`,
            });
          }
          if (rec.b.kind === 'fail')
            return send(res, 422, {
              detail: [
                {
                  loc: ['body', 'prompt'],
                  msg: 'The prompt was flagged by the safety checker',
                  type: 'content_policy_violation',
                },
              ],
            });
          if (fake.textOutput !== null) return send(res, 200, { output: fake.textOutput });
          return send(res, 200, {
            video: {
              url: `${base}/files/${m[3]}.mp4`,
              content_type: 'video/mp4',
              file_name: 'out.mp4',
              file_size: fake.output.length,
            },
            seed: 42,
          });
        }
        if (req.method === 'POST') {
          const input = await readBody(req);
          const id = crypto.randomUUID();
          const b = fake.script.shift() ?? { kind: 'ok' };
          fake.submitted.push({ id, path: url.pathname, input });
          if (b.kind === 'throttled')
            return send(res, 429, { detail: 'Rate limit exceeded' }, { 'retry-after': '1' });
          reqs.set(id, { b, polls: 0, cancelled: false });
          const [, owner, app] = url.pathname.split('/');
          const r = `${base}/${owner}/${app}/requests/${id}`;
          return send(res, 200, {
            request_id: id,
            response_url: r,
            status_url: `${r}/status`,
            cancel_url: `${r}/cancel`,
            queue_position: 0,
          });
        }
        send(res, 404, { detail: 'Not found' });
      })().catch(() => res.destroy()),
  );
  fake.base = base;
  fake.close = close;
  return fake;
}
