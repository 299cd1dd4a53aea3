// Which methods a path is served with, for RFC 9110's 405 and OPTIONS: Fastify's router answers a
// known path with an unknown method as it answers an unknown path (404). Every route is recorded as
// it is added (an onRoute hook on the root, so every scope's routes); the not-found handlers ask here
// before answering 404: a path some route serves gets 405 METHOD_NOT_ALLOWED with `Allow`, and
// OPTIONS on it 204 with `Allow`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';

interface Known {
  pattern: RegExp;
  methods: Set<string>;
}

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A route's url (`/v1/generations/:id`, `/openai/v1/models/*`) as a regular expression of paths. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((part) =>
      part === '*'
        ? '.*'
        : part.startsWith(':')
          ? '[^/]+'
          : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

export class AllowedMethods {
  private byUrl = new Map<string, Known>();

  /** Records every route of `app` and of its scopes added from now on. */
  watch(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      if (!route.url) return;
      const known = this.byUrl.get(route.url) ?? {
        pattern: patternOf(route.url),
        methods: new Set<string>(),
      };
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) known.methods.add(m.toUpperCase());
      if (known.methods.has('GET')) known.methods.add('HEAD');
      this.byUrl.set(route.url, known);
    });
  }

  /** The methods `path` is served with, in a fixed order (OPTIONS always); [] for an unknown path. */
  of(path: string): string[] {
    const found = new Set<string>();
    for (const k of this.byUrl.values())
      if (k.pattern.test(path)) for (const m of k.methods) found.add(m);
    if (found.size === 0) return [];
    found.add('OPTIONS');
    return ORDER.filter((m) => found.has(m));
  }

  /**
   * The answer of a not-found handler for a known path: OPTIONS → 204 with `Allow` (sent here, true),
   * another method → the 405 to send (an ApiError carrying `Allow`); undefined for an unknown path.
   */
  answer(req: FastifyRequest, reply: FastifyReply): true | ApiError | undefined {
    const allow = this.of(req.url.split('?')[0]);
    if (allow.length === 0) return undefined;
    if (req.method === 'OPTIONS') {
      reply.code(204).header('allow', allow.join(', ')).send();
      return true;
    }
    return new ApiError(
      'METHOD_NOT_ALLOWED',
      `${req.method} is not served here; this path takes ${allow.join(', ')}.`,
      undefined,
      { allow: allow.join(', ') },
    );
  }
}
