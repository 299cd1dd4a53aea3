// The worker's spans (src/tracing/): a claimed render continues the trace of the request that created
// it, through the traceparent stored on its row.
import { inSpan } from '../tracing/trace.ts';
import type { ClaimedJob } from './types.ts';

export const spanAttributes = (job: ClaimedJob) => ({
  'rendergate.generation_id': job.id,
  'rendergate.model_id': job.model_id,
  'rendergate.attempt': job.lease.attempt,
});

/** `fn` in a span of the create's trace when the render carries one (src/tracing/); else just `fn`. */
export function traced<T>(job: ClaimedJob, name: string, fn: () => Promise<T>): Promise<T> {
  if (!job.trace_parent) return fn();
  return inSpan(name, { parent: job.trace_parent, attributes: spanAttributes(job) }, fn);
}
