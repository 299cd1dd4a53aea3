// A fake of Replicate's hosted prediction API, after the replicate.com HTTP API reference and
// replicate/replicate-javascript (`lib/predictions.js`, `lib/models.js`):
// - `POST /v1/models/{owner}/{name}/predictions { input }` (or `POST /v1/predictions { version, input }`),
//   `Authorization: Bearer <token>` → 201 prediction `{ id, model, version, input, status: "starting",
//   output: null, error: null, logs: "", urls: { get, cancel } }`; 401 `{ title, detail, status }` for a
//   bad token; 429 with Retry-After when throttled.
// - `GET /v1/predictions/{id}` → the prediction; status starting → processing → succeeded | failed |
//   canceled (| aborted); logs grow with tqdm lines; output is a URL (or a list of them) when succeeded.
// - `POST /v1/predictions/{id}/cancel` → the prediction, now canceled.
import crypto from 'node:crypto';
import { listen, readBody, send } from './http-util.ts';

export type ReplicateBehaviour =
  | { kind: 'ok'; polls?: number }
  | { kind: 'fail' }
  | { kind: 'hang' }
  | { kind: 'throttled' }
  | { kind: 'poll-error' }
  | { kind: 'wrong-type' };

export interface ReplicateFake {
  base: string;
  token: string;
  output: Buffer;
  /** When set, a succeeded prediction's output is this list of strings (a language model's). */
  textOutput: string[] | null;
  script: ReplicateBehaviour[];
  created: { id: string; path: string; input: any }[];
  polls: number;
  cancels: string[];
  close: () => Promise<void>;
}

export async function replicateFake(): Promise<ReplicateFake> {
  const preds = new Map<string, { p: any; b: ReplicateBehaviour; polls: number }>();
  const fake = {
    token: 'r8_test_token_0123456789',
    output: crypto.randomBytes(6000),
    textOutput: null,
    script: [],
    created: [],
    polls: 0,
    cancels: [],
  } as unknown as ReplicateFake;
  const { base, close } = await listen(
    (req, res) =>
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (url.pathname.startsWith('/files/')) {
          res.writeHead(200, {
            'content-type': url.pathname.endsWith('.html')
              ? 'text/html; charset=utf-8'
              : 'video/mp4',
            'content-length': fake.output.length,
          });
          return res.end(fake.output);
        }
        if (req.headers.authorization !== `Bearer ${fake.token}`)
          return send(res, 401, {
            title: 'Unauthenticated',
            detail: 'You did not pass a valid authentication token',
            status: 401,
          });
        const create = /^\/v1\/(?:models\/[^/]+\/[^/]+\/)?predictions$/.test(url.pathname);
        if (req.method === 'POST' && create) {
          const body = await readBody(req);
          const b = fake.script.shift() ?? { kind: 'ok' };
          if (b.kind === 'throttled')
            return send(
              res,
              429,
              {
                title: 'Request was throttled',
                detail: 'Request was throttled. Expected available in 1 second.',
                status: 429,
              },
              { 'retry-after': '1' },
            );
          const id = crypto.randomBytes(10).toString('hex');
          const p = {
            id,
            model: 'owner/name',
            version: body.version ?? 'v1',
            input: body.input,
            logs: '',
            output: null,
            error: null,
            status: 'starting',
            created_at: new Date().toISOString(),
            urls: {
              get: `${base}/v1/predictions/${id}`,
              cancel: `${base}/v1/predictions/${id}/cancel`,
            },
          };
          preds.set(id, { p, b, polls: 0 });
          fake.created.push({ id, path: url.pathname, input: body.input });
          return send(res, 201, p);
        }
        const get = /^\/v1\/predictions\/([^/]+)$/.exec(url.pathname);
        if (req.method === 'GET' && get) {
          const rec = preds.get(get[1]);
          if (!rec) return send(res, 404, { detail: 'Not found.', status: 404 });
          fake.polls++;
          rec.polls++;
          if (rec.b.kind === 'poll-error' && rec.polls === 1)
            return send(res, 502, { detail: 'bad gateway' });
          const p = rec.p;
          if (['succeeded', 'failed', 'canceled'].includes(p.status) || rec.b.kind === 'hang')
            return send(res, 200, p);
          p.status = 'processing';
          p.logs += `${Math.min(100, rec.polls * 25)}%|██        | ${rec.polls}/4 [00:0${rec.polls}<00:03]\n`;
          if (rec.polls >= ((rec.b.kind === 'ok' && rec.b.polls) || 3)) {
            if (rec.b.kind === 'fail')
              Object.assign(p, {
                status: 'failed',
                error: 'Prediction interrupted; please retry (code: PA)',
              });
            else
              Object.assign(p, {
                status: 'succeeded',
                output: fake.textOutput ?? [
                  `${base}/files/${p.id}.${rec.b.kind === 'wrong-type' ? 'html' : 'mp4'}`,
                ],
              });
          }
          return send(res, 200, p);
        }
        const cancel = /^\/v1\/predictions\/([^/]+)\/cancel$/.exec(url.pathname);
        if (req.method === 'POST' && cancel) {
          fake.cancels.push(cancel[1]);
          const rec = preds.get(cancel[1]);
          if (!rec) return send(res, 404, { detail: 'Not found.' });
          rec.p.status = 'canceled';
          return send(res, 200, rec.p);
        }
        send(res, 404, { detail: 'Not found.' });
      })().catch(() => res.destroy()),
  );
  fake.base = base;
  fake.close = close;
  return fake;
}
