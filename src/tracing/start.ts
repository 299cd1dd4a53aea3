// OpenTelemetry, started by main.ts before it loads anything that talks HTTP or PostgreSQL, and only
// when tracingWanted() (trace.ts): an unset OTEL_EXPORTER_OTLP_ENDPOINT never loads this module. The
// standard OTEL_* variables (endpoint, headers, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, sampler,
// OTEL_BSP_*) are read by the SDK itself. Spans are sent as OTLP/HTTP JSON.
//
// fetch() is instrumented through its diagnostics channel; `pg` and `http` through require hooks: pg
// is CommonJS (an ESM import of it reaches the hook), and node:http is required here once so that the
// server of the API is patched whichever way it is imported later. pg and outgoing HTTP spans are made
// only under a span of ours or of a request, so the worker's polls, lease renewals and the janitor do
// not each send a trace.
import { createRequire } from 'node:module';
import {
  context,
  propagation,
  trace,
  ROOT_CONTEXT,
  SpanStatusCode,
  type Context,
} from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { installTracing, type SpanOptions } from './trace.ts';
import { VERSION } from '../domain/version.ts';
import { cutTokens } from '../domain/scrub.ts';

/** Paths whose requests are not traced: scrapes and probes that would each make a trace. */
const UNTRACED = new Set(['/metrics', '/healthz', '/readyz']);

/** `url.path` and `url.query` of a request target with its tokens cut; nothing if none. */
function cutTarget(url: string): Record<string, string> {
  const cut = cutTokens(url);
  if (cut === url) return {};
  const q = cut.indexOf('?');
  return q < 0
    ? { 'url.path': cut }
    : { 'url.path': cut.slice(0, q), 'url.query': cut.slice(q + 1) };
}

export function startTracing(role: string): void {
  const resource = resourceFromAttributes({
    'service.name': 'rendergate',
    'service.version': VERSION,
    'rendergate.role': role,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        requireParentforOutgoingSpans: true,
        ignoreIncomingRequestHook: (req) => UNTRACED.has((req.url ?? '').split('?')[0]),
        // A one-time link's token and a credential in the query never reach a span, as they never
        // reach the access log (domain/scrub.ts): these attributes replace the instrumentation's.
        startIncomingSpanHook: (req) => cutTarget(req.url ?? '/'),
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      // fetch(), which most backends use to reach model servers: within a render's span only
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
  const require = createRequire(import.meta.url);
  require('node:http');
  require('node:https');

  const tracer = trace.getTracer('rendergate', VERSION);
  const parentOf = (parent: string | null | undefined): Context =>
    parent ? propagation.extract(ROOT_CONTEXT, { traceparent: parent }) : context.active();

  installTracing({
    traceParent() {
      if (!trace.getSpan(context.active())) return null;
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent ?? null;
    },
    inSpan<T>(name: string, o: SpanOptions, fn: () => Promise<T>): Promise<T> {
      return tracer.startActiveSpan(
        name,
        { attributes: o.attributes },
        parentOf(o.parent),
        async (span) => {
          try {
            return await fn();
          } catch (e) {
            span.recordException(e as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.message });
            throw e;
          } finally {
            span.end();
          }
        },
      );
    },
    recordSpan(name, o) {
      tracer
        .startSpan(name, { attributes: o.attributes, startTime: o.start }, parentOf(o.parent))
        .end(o.end);
    },
    nameRequest(method, route) {
      const span = trace.getActiveSpan();
      if (!span || !route) return;
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
    },
    shutdown: () => provider.shutdown(),
  });
}
