// The studio's own static files, read once at start and served with an ETag: no CDN, no build step.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export function registerAssets(app: FastifyInstance) {
  const files = new Map<string, { body: Buffer; type: string; etag: string }>();
  for (const name of fs.readdirSync(DIR)) {
    const body = fs.readFileSync(path.join(DIR, name));
    files.set(name, {
      body,
      type: TYPES[path.extname(name)] ?? 'application/octet-stream',
      etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`,
    });
  }
  app.get<{ Params: { name: string } }>('/assets/:name', (req, reply) => {
    const f = files.get(req.params.name);
    if (!f) return reply.code(404).type('text/plain').send('Not found');
    reply.header('etag', f.etag).header('cache-control', 'public, max-age=300');
    if (req.headers['if-none-match'] === f.etag) return reply.code(304).send();
    return reply.type(f.type).send(f.body);
  });
  // Browsers ask for /favicon.ico on pages without an icon link (a PDF, an image opened alone).
  app.get('/favicon.ico', (_req, reply) => reply.redirect('/assets/favicon.svg', 301));
}
