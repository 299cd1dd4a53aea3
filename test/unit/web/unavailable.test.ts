// What counts as the database being away (503 SERVICE_UNAVAILABLE, not a 500): its connection refused,
// reset or timed out over TCP, its Unix socket gone (a stopped embedded PostgreSQL removes it), and
// PostgreSQL's own shutdown and timeout codes; never a file missing elsewhere.
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { isUnavailable } from '../../../src/web/error-handler.ts';

/** The error a real connect gives for `options`. */
const connectError = (options: net.NetConnectOpts) =>
  new Promise<Error>((resolve) => {
    const s = net.connect(options);
    s.once('error', resolve);
    s.once('connect', () => {
      s.destroy();
      resolve(new Error('connected'));
    });
  });

it("a Unix socket that is gone, and a refused port, are the database's absence", async () => {
  const gone = await connectError({ path: path.join(os.tmpdir(), `no-such-${process.pid}.sock`) });
  expect((gone as NodeJS.ErrnoException).code).toBe('ENOENT');
  expect(isUnavailable(gone)).toBe(true);
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  const refused = await connectError({ host: '127.0.0.1', port });
  expect(isUnavailable(refused)).toBe(true);
  expect(isUnavailable({ code: '57P01' })).toBe(true);
});

it('a missing file is not', () => {
  const e = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), {
    code: 'ENOENT',
    syscall: 'open',
  });
  expect(isUnavailable(e)).toBe(false);
  expect(isUnavailable(new Error('boom'))).toBe(false);
});
