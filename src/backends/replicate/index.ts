// Replicate's hosted predictions (replicate.com HTTP API reference; replicate/replicate-javascript
// `lib/predictions.js`, `index.js` wait()): `POST /v1/models/{owner}/{name}/predictions { input }` (or
// `POST /v1/predictions { version, input }` when a version is pinned), `Authorization: Bearer`; then
// `GET /v1/predictions/{id}` every 500 ms (the client's default interval; longer when a 429 says so)
// until `succeeded`, `failed`, `canceled` or `aborted`, a terminal status: unlike the JS client's
// `run()` (its issue #328) we never take a non-terminal answer as the end. Cancel:
// `POST /v1/predictions/{id}/cancel`. Progress from the tqdm lines of `logs`. Outputs are URLs.
// A create is not retried after it may have reached Replicate (a lost answer): that could start and
// bill a second prediction; the worker's retry of the attempt covers it instead.
import type { CompiledModel } from '../../domain/catalog-load.ts';
import { RenderError, type RenderOutput } from '../types.ts';
import {
  call,
  errorFor,
  malformed,
  readJson,
  textAnswerLimit,
  withRetries,
  type CallOptions,
} from '../shared/http.ts';
import { inlineUploads } from '../shared/output.ts';
import { pollJson } from '../shared/poll.ts';
import { textOf, type DriverDeps, type RemoteBackend } from '../shared/driver.ts';
import { hostedOutput, logProgress, runHostedJob } from '../shared/hosted.ts';
import type { ReplicateBinding } from './catalog.ts';

interface Prediction {
  id?: string;
  status?: string;
  output?: unknown;
  error?: unknown;
  logs?: string;
}

const TERMINAL = ['succeeded', 'failed', 'canceled', 'aborted'];
const POLL_MS = 500;

export function createReplicateBackend(
  model: CompiledModel,
  b: ReplicateBinding,
  deps: DriverDeps,
): RemoteBackend {
  const token = deps.secrets.resolve(b.apiToken);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const redact = (t: string) => deps.secrets.redact(t);
  const api = `${b.baseUrl}/v1`;
  // Answers carry at most the output text (and logs); larger ones are not read.
  const jsonLimit = textAnswerLimit(deps.textLimitBytes);

  return {
    async run(inputs, ctx): Promise<RenderOutput> {
      const until = Date.now() + ctx.timeLimitSeconds * 1000;
      const o: CallOptions = {
        signal: ctx.signal,
        timeoutMs: 30_000,
        redact,
        what: 'Replicate prediction',
      };
      const job = {
        driver: 'replicate' as const,
        kind: 'prediction',
        cancel: {
          url: (id: string) => `${api}/predictions/${encodeURIComponent(id)}/cancel`,
          method: 'POST',
          headers,
        },
      };
      return await runHostedJob(job, deps, ctx, async (started) => {
        const input = await inlineUploads(
          model.backendCel.inputs ? model.backendCel.inputs.evaluate(inputs) : inputs,
          ctx.readUpload,
        );
        const [url, body] = b.version
          ? [`${api}/predictions`, { version: b.version, input }]
          : [`${api}/models/${b.model}/predictions`, { input }];
        const created = await withRetries(
          async () => {
            const res = await call(url, { method: 'POST', headers, body: JSON.stringify(body) }, o);
            if (!res.ok) throw await errorFor(res, o);
            return (await readJson(res, o, jsonLimit)) as Prediction;
          },
          { signal: ctx.signal, tries: 3, until, only: ['BACKEND_BUSY'] },
        );
        if (typeof created?.id !== 'string') throw malformed('Replicate prediction', 'no id');
        const id = created.id;
        started(id);
        const p = TERMINAL.includes(String(created.status))
          ? created
          : await pollJson<Prediction>(
              `${api}/predictions/${encodeURIComponent(id)}`,
              headers,
              { ...o, intervalMs: POLL_MS, until, limitBytes: jsonLimit },
              (x) => {
                if (typeof x?.logs === 'string') logProgress(ctx, x.logs);
                return TERMINAL.includes(String(x?.status));
              },
            );
        if (p.status === 'failed')
          throw new RenderError(
            'MODEL_FAILED',
            `The model failed: ${redact(textOf(p.error ?? 'no reason given')).slice(0, 300)}`,
            false,
          );
        if (p.status !== 'succeeded')
          throw new RenderError(
            'BACKEND_CANCELLED',
            `Replicate ended the prediction (${p.status}).`,
            true,
          );
        const texts = Array.isArray(p.output) && p.output.every((x) => typeof x === 'string');
        return hostedOutput(model, deps, ctx, {
          text: texts ? (p.output as string[]).join('') : p.output,
          files: p.output,
          baseUrl: b.baseUrl,
          until,
          redact,
          what: 'Replicate prediction',
          noFile: 'no file in its output',
          fileWhat: 'Replicate output',
        });
      });
    },
  };
}
