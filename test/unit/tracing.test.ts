// The tracing facade (src/tracing/trace.ts) as every process without OTEL_EXPORTER_OTLP_ENDPOINT runs
// it: nothing installed, so each call is the plain call it wraps. The traced side is
// test/e2e/tracing.test.ts.
import { expect, it } from 'vitest';
import {
  currentTraceParent,
  inSpan,
  recordSpan,
  tracingOn,
  tracingWanted,
} from '../../src/tracing/trace.ts';

it('asks for traces only when an OTLP endpoint is set and the SDK is not disabled', () => {
  expect(tracingWanted({})).toBe(false);
  expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
  expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(true);
  expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(
    true,
  );
  expect(
    tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
  ).toBe(false);
  expect(
    tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
  ).toBe(false);
});

it('without the SDK, spans are the plain calls and no traceparent exists', async () => {
  expect(tracingOn()).toBe(false);
  expect(await inSpan('x', {}, async () => 42)).toBe(42);
  await expect(
    inSpan('x', { parent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, async () => {
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  expect(currentTraceParent()).toBeNull();
  expect(() => recordSpan('x', { start: 0, end: 1 })).not.toThrow();
});
