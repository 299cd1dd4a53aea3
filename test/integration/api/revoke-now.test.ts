// A key revoked through a node stops working on that node at once, though the node had just looked
// it up (its lookups are cached for half a second: docs/api.md gives other nodes a second). Polls and
// quotes, which the fast answers take from that cache, stop too.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/db.ts';
import { client, startTestService, type TestService } from '../../helpers/service.ts';

let dbh: Awaited<ReturnType<typeof freshDatabase>>;
let svc: TestService;

beforeAll(async () => {
  dbh = await freshDatabase();
  svc = await startTestService(dbh.url);
});
afterAll(async () => {
  await svc?.stop();
  await dbh?.drop();
});

it('refuses a revoked key at once on the node that revoked it', async () => {
  const api = client(svc.base);
  const quote = {
    modelId: 'rendergate/image-to-video',
    inputs: { prompt: 'A lighthouse at dusk', image: 'https://example.com/a.png' },
  };
  for (let i = 0; i < 5; i++) {
    const { key, keyId } = await api.account(0);
    // Looked up, and answered from the cache (the quote twice: the second from the fast answers).
    expect((await api.call('GET', '/v1/me', { key })).status).toBe(200);
    for (let j = 0; j < 2; j++)
      expect((await api.call('POST', '/v1/quote', { key, body: quote })).status).toBe(200);
    await api.admin('DELETE', `/keys/${keyId}`);
    const me = await api.call('GET', '/v1/me', { key });
    expect([me.status, me.json?.code]).toEqual([401, 'API_KEY_REVOKED']);
    const q = await api.call('POST', '/v1/quote', { key, body: quote });
    expect([q.status, q.json?.code]).toEqual([401, 'API_KEY_REVOKED']);
  }
});
