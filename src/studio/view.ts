// Rendering pages: Eta templates (src/studio/views) with auto-escaping on, so every value is HTML-escaped
// unless a template asks otherwise with `<%~`, which only layouts use for the page already rendered.
// No page is built by string concatenation.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can } from '../domain/authorize.ts';

const VIEWS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'views');
const eta = new Eta({ views: VIEWS, autoEscape: true, cache: true, autoTrim: [false, 'nl'] });
// Eta resolves a template's name to its file on every render and include (JSON, path joins, a check that
// the file is inside the views), a few microseconds each, three times a page. The names are the code's
// own constants, so each (including file, name) pair is resolved, and checked, once.
const resolveOnce = eta.resolvePath;
const resolved = new Map<string, string>();
eta.resolvePath = function (template, options) {
  const key = `${options?.filepath ?? ''}\n${template}`;
  let file = resolved.get(key);
  if (file === undefined) {
    file = resolveOnce.call(this, template, options);
    resolved.set(key, file);
  }
  return file;
};

export const SECURITY_HEADERS = {
  // Scripts and styles only from our own files: an injected <script> or inline handler never runs.
  'content-security-policy':
    "default-src 'self'; img-src 'self' data: blob: http: https:; media-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/** Euros from cents, for people: "€1.25". */
export const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;
export const when = (iso: string | Date | null | undefined) => {
  if (!iso) return '—';
  // A timestamp as toISOString() writes it (every one History shows): its minutes, without a Date.
  if (typeof iso === 'string' && iso.length === 24 && iso[10] === 'T' && iso[23] === 'Z')
    return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
};

export interface PageData {
  title: string;
  [k: string]: unknown;
}

/** Renders a full page (its template inside the layout) as the reply. Pages are private: never cached. */
export function page(
  reply: FastifyReply,
  template: string,
  req: FastifyRequest,
  data: PageData,
  layout = 'layout',
) {
  // Outside the studio's scope (the root's 404) there is no CSRF plugin: such a page has no forms.
  const csrf = typeof reply.generateCsrf === 'function' ? reply.generateCsrf() : '';
  const it = {
    ...data,
    csrf,
    session: req.studio,
    // the Audit log is in the menu only for those who may open it
    canAudit: req.studio ? can(req.studio.principal, 'audit.view') : false,
    // the Account page's name form is offered only to those who may rename (an owner)
    canRename: req.studio ? can(req.studio.principal, 'account.rename') : false,
    euros,
    when,
    layout,
    path: req.url.split('?')[0],
    topupsOn: req.topupsOn,
  };
  const html = eta.render(template, it);
  return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
}

/**
 * A part of a page as HTML (no layout, no session or CSRF token in it), for a page that keeps a
 * part it made between requests and writes it with `<%~`.
 */
export const partHtml = (template: string, data: Record<string, unknown>): string =>
  eta.render(template, { ...data, euros, when });

/** A fragment (no layout), for the script's live updates. */
export function fragment(reply: FastifyReply, template: string, data: Record<string, unknown>) {
  const html = eta.render(template, { ...data, euros, when });
  return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
}
