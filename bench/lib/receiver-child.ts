// A webhook receiver in a process of its own (forked by receiver.ts): its clock readings are not held up
// by the load generator's event loop. Answers 204 to every POST and, for each, sends the parent
// { generationId, type, at } over IPC, `at` being wallNow() (sub-millisecond, aligned to the system
// clock that PostgreSQL stamps rows with) when the body's last byte arrived.
import http from 'node:http';
import { wallNow } from './clock.ts';

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = wallNow();
    res.writeHead(204).end();
    let body: { type?: string; data?: { id?: string } } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      /* reported without an id */
    }
    process.send!({ generationId: String(body.data?.id), type: String(body.type), at });
  });
});
server.keepAliveTimeout = 1;
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as { port: number }).port });
});
process.on('disconnect', () => process.exit(0));
