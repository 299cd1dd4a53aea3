// RENDERGATE_WORKER_CALLBACK_URL and RENDERGATE_COG_POLL_MS: parsed once, a bad value refused by name.
import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

const base = { RENDERGATE_ADMIN_TOKEN: 'x'.repeat(16) };

it('is off by default, and takes http://host:port[/path]', () => {
  expect(loadConfig(base)).toMatchObject({ workerCallbackUrl: null, cogPollMs: 2000 });
  expect(
    loadConfig({
      ...base,
      RENDERGATE_WORKER_CALLBACK_URL: 'http://worker-1:8090/rg/',
      RENDERGATE_COG_POLL_MS: '500',
    }),
  ).toMatchObject({ workerCallbackUrl: 'http://worker-1:8090/rg', cogPollMs: 500 });
});

it('refuses an address Cog could not call back, naming the variable', () => {
  for (const bad of [
    'worker-1:8090',
    'http://worker-1',
    'https://worker-1:8443',
    'http://worker-1:8090/?x=1',
  ]) {
    expect(() => loadConfig({ ...base, RENDERGATE_WORKER_CALLBACK_URL: bad }), bad).toThrow(
      ConfigError,
    );
  }
  expect(() => loadConfig({ ...base, RENDERGATE_COG_POLL_MS: '10' })).toThrow(
    /RENDERGATE_COG_POLL_MS/,
  );
});
