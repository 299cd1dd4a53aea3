// The tracing the rest of the code calls: spans around our own steps and the W3C traceparent that a
// render carries from the API to the worker (generations.trace_parent). Nothing here imports
// OpenTelemetry: start.ts, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set, installs the
// implementation. Until then every call is a plain function call that does nothing.

/** What start.ts provides once the SDK runs. */
export interface TracingImpl {
  /** The traceparent of the active span, or null. */
  traceParent(): string | null;
  /** Runs `fn` in a new active span, a child of `parent` (a traceparent) when given, else of the active one. */
  inSpan<T>(name: string, o: SpanOptions, fn: () => Promise<T>): Promise<T>;
  /** A finished span that started before its parent was known (a claim: the row carries the parent). */
  recordSpan(name: string, o: SpanOptions & { start: number; end: number }): void;
  /** Names the active HTTP server span by the route that matched (`POST /v1/generations`). */
  nameRequest(method: string, route: string | undefined): void;
  shutdown(): Promise<void>;
}

export interface SpanOptions {
  parent?: string | null;
  attributes?: Record<string, string | number | boolean>;
}

let impl: TracingImpl | null = null;

export function installTracing(t: TracingImpl): void {
  impl = t;
}

export const tracingOn = (): boolean => impl !== null;

/** Whether this environment asks for traces: the standard variables the SDK reads itself. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

export const currentTraceParent = (): string | null => (impl ? impl.traceParent() : null);

export function inSpan<T>(name: string, o: SpanOptions, fn: () => Promise<T>): Promise<T> {
  return impl ? impl.inSpan(name, o, fn) : fn();
}

export function recordSpan(name: string, o: SpanOptions & { start: number; end: number }): void {
  impl?.recordSpan(name, o);
}

export function nameRequestSpan(method: string, route: string | undefined): void {
  impl?.nameRequest(method, route);
}

/** Sends the spans still buffered; at shutdown. */
export async function stopTracing(): Promise<void> {
  await impl?.shutdown().catch(() => undefined);
}
