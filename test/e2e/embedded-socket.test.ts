// The embedded PostgreSQL is reached through a Unix socket in its own data directory (src/db/
// embedded.ts): its URL names the socket's directory, connections through it are not TCP, and its
// loopback port stays open to tools. A data directory whose socket path would pass the kernel's limit
// (107 bytes), or where the socket cannot be made, gets TCP alone, and works the same.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.ts';
import { freePort } from '../helpers/service.ts';

const dirs: string[] = [];
const servers: EmbeddedPostgres[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function start(sub: string, port?: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-socket-'));
  fs.chmodSync(dir, 0o755); // the embedded PostgreSQL runs as its own user when the tests run as root
  dirs.push(dir);
  const dataDir = path.join(dir, sub);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  for (let d = dataDir; d !== dir; d = path.dirname(d)) fs.chmodSync(d, 0o755);
  const server = await startEmbeddedPostgres(dataDir, () => {}, port);
  servers.push(server);
  return { dataDir, server };
}

/** The server's own view of a connection: its address (null through a Unix socket) and socket dirs. */
async function seen(config: string | pg.ClientConfig) {
  const c = new pg.Client(config);
  await c.connect();
  try {
    const { rows } = await c.query<{ addr: string | null; dirs: string }>(
      `SELECT host(inet_server_addr()) AS addr, current_setting('unix_socket_directories') AS dirs`,
    );
    return rows[0];
  } finally {
    await c.end();
  }
}

it('connects through a socket in its data directory; the loopback port stays open', async () => {
  const { dataDir, server } = await start('data');
  const url = new URL(server.url);
  const socketDir = path.join(dataDir, 'postgres');
  expect(decodeURIComponent(url.hostname)).toBe(socketDir);
  expect(fs.statSync(path.join(socketDir, `.s.PGSQL.${url.port}`)).isSocket()).toBe(true);
  expect(await seen(server.url)).toEqual({ addr: null, dirs: socketDir });
  const tcp = await seen({
    host: '127.0.0.1',
    port: Number(url.port),
    user: 'postgres',
    password: decodeURIComponent(url.password),
    database: 'postgres',
  });
  expect(tcp.addr).toBe('127.0.0.1');
}, 90_000);

it('uses TCP alone when the socket path would be too long', async () => {
  const { server } = await start(`${'d'.repeat(60)}/${'e'.repeat(30)}`);
  const url = new URL(server.url);
  expect(url.hostname).toBe('127.0.0.1');
  expect(await seen(server.url)).toEqual({ addr: '127.0.0.1', dirs: '' });
}, 90_000);

it('uses TCP alone when the socket cannot be made', async () => {
  const port = await freePort();
  const { dataDir, server } = await start('data', port);
  await server.stop();
  // something in the socket's way, as a file system without sockets would refuse it
  fs.mkdirSync(path.join(dataDir, 'postgres', `.s.PGSQL.${port}`));
  const logged: string[] = [];
  const again = await startEmbeddedPostgres(dataDir, (m) => logged.push(m), port);
  servers.push(again);
  expect(new URL(again.url).hostname).toBe('127.0.0.1');
  expect(logged).toContain(
    'the embedded PostgreSQL could not make its Unix socket; using its port alone',
  );
  expect(await seen(again.url)).toEqual({ addr: '127.0.0.1', dirs: '' });
}, 90_000);
