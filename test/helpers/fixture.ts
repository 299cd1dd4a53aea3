// The usual setup of an integration test file: a fresh database, the service on it, an HTTP client and
// the loopback image server, started before the file's tests and stopped after them.
import { afterAll, beforeAll } from 'vitest';
import { freshDatabase } from './db.ts';
import { imageServer } from './images.ts';
import { client, startTestService, type TestService } from './service.ts';

export interface Fixture {
  dbh: Awaited<ReturnType<typeof freshDatabase>>;
  svc: TestService;
  api: ReturnType<typeof client>;
  img: Awaited<ReturnType<typeof imageServer>>;
}

/** Registers the file's beforeAll/afterAll; the returned object is filled in before the first test. */
export function serviceFixture(opts: Parameters<typeof startTestService>[1] = {}): Fixture {
  const f = {} as Fixture;
  beforeAll(async () => {
    f.dbh = await freshDatabase();
    f.svc = await startTestService(f.dbh.url, opts);
    f.api = client(f.svc.base);
    f.img = await imageServer();
  });
  afterAll(async () => {
    await f.img?.close();
    await f.svc?.stop();
    await f.dbh?.drop();
  });
  return f;
}
