// fal's queue (fal-ai/fal-js `libs/client/src/queue.ts`; docs.fal.ai "Queue"): `POST {base}/{app}` with
// the input as the body, `Authorization: Key <key>` → `{ request_id, status_url, response_url,
// cancel_url }`; `GET {base}/{owner}/{name}/requests/{id}/status?logs=1` → `{ status: IN_QUEUE |
// IN_PROGRESS | COMPLETED, queue_position, logs }`, polled every 500 ms (the client's default);
// `GET …/requests/{id}` → the result (files as `{ url, content_type }`); `PUT …/requests/{id}/cancel`.
// Status and result paths drop any subpath of the app id ("fal-ai/flux/dev" → "fal-ai/flux"), as the
// client does. fal's `queue_position` is fal's own queue, after our worker has started the render, so
// it is not the generation's `queuePosition` (ours, null once started): a render waiting at fal
// reports progress 0, then the tqdm progress of its logs.
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
import type { FalBinding } from './catalog.ts';

interface Status {
  status?: string;
  queue_position?: number;
  logs?: { message?: string }[] | null;
  error?: unknown;
}

const POLL_MS = 500;

export function createFalBackend(
  model: CompiledModel,
  b: FalBinding,
  deps: DriverDeps,
): RemoteBackend {
  const key = deps.secrets.resolve(b.apiKey);
  const headers = { authorization: `Key ${key}`, 'content-type': 'application/json' };
  const redact = (t: string) => deps.secrets.redact(t);
  const [owner, name] = b.app.split('/');
  const requests = `${b.baseUrl}/${owner}/${name}/requests`;
  // Answers carry at most the output text (and logs); larger ones are not read.
  const jsonLimit = textAnswerLimit(deps.textLimitBytes);

  return {
    async run(inputs, ctx): Promise<RenderOutput> {
      const until = Date.now() + ctx.timeLimitSeconds * 1000;
      const o: CallOptions = { signal: ctx.signal, timeoutMs: 30_000, redact, what: 'fal request' };
      const job = {
        driver: 'fal' as const,
        kind: 'request',
        cancel: {
          url: (id: string) => `${requests}/${encodeURIComponent(id)}/cancel`,
          method: 'PUT',
          headers,
        },
      };
      return await runHostedJob(job, deps, ctx, async (started) => {
        const input = await inlineUploads(
          model.backendCel.inputs ? model.backendCel.inputs.evaluate(inputs) : inputs,
          ctx.readUpload,
        );
        const submitted = await withRetries(
          async () => {
            const res = await call(
              `${b.baseUrl}/${b.app}`,
              { method: 'POST', headers, body: JSON.stringify(input) },
              o,
            );
            if (!res.ok) throw await errorFor(res, o);
            return (await readJson(res, o, jsonLimit)) as { request_id?: unknown };
          },
          { signal: ctx.signal, tries: 3, until, only: ['BACKEND_BUSY'] },
        );
        if (typeof submitted?.request_id !== 'string')
          throw malformed('fal submit', 'no request_id');
        const id = submitted.request_id;
        started(id);
        const status = await pollJson<Status>(
          `${requests}/${encodeURIComponent(id)}/status?logs=1`,
          headers,
          { ...o, intervalMs: POLL_MS, until, limitBytes: jsonLimit },
          (s) => {
            if (s?.status === 'IN_PROGRESS' && Array.isArray(s.logs))
              logProgress(ctx, s.logs.map((l) => l?.message ?? '').join('\n'));
            return s?.status === 'COMPLETED';
          },
        );
        if (status.error)
          throw new RenderError(
            'MODEL_FAILED',
            `The model failed: ${redact(textOf(status.error)).slice(0, 300)}`,
            false,
          );
        const res = await call(`${requests}/${encodeURIComponent(id)}`, { headers }, o);
        if (!res.ok) {
          const err = await errorFor(res, { ...o, what: 'fal result' });
          // A result that is an error for the input (422 with `detail`) is the model's refusal: final.
          throw err.code === 'MODEL_INPUT_REJECTED'
            ? new RenderError('MODEL_FAILED', err.message, false)
            : err;
        }
        const result = (await readJson(res, o, jsonLimit)) as {
          output?: unknown;
          text?: unknown;
        } | null;
        return hostedOutput(model, deps, ctx, {
          text: result?.output ?? result?.text,
          files: result,
          baseUrl: b.baseUrl,
          until,
          redact,
          what: 'fal result',
          noFile: 'no file in it',
          fileWhat: 'fal output',
        });
      });
    },
  };
}
