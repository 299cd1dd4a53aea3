// What the operations of /v1 are written with (paths.ts): one operation lists the statuses it can
// answer; error statuses share one response per status (errors.ts), so a code moves status in one place.
export const schema = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (name: string) => ({ 'application/json': { schema: schema(name) } });
export const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
export const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
export const RATE = {
  RateLimit: header('RateLimit'),
  'RateLimit-Policy': header('RateLimit-Policy'),
};

/**
 * Statuses any authenticated request can get, whatever its route. 403: who acts is checked against
 * the one table (domain/authorize.ts) by the services a route calls.
 */
const COMMON = [400, 401, 403, 408, 429, 431, 500, 503];
/** Statuses of a request that may carry a body. */
const WITH_BODY = [413, 415];

interface Op {
  id: string;
  summary: string;
  description?: string;
  tag: string;
  params?: unknown[];
  body?: unknown;
  ok: Record<string, unknown>;
  errors?: number[];
  public?: boolean;
}

export function op(o: Op, method: string) {
  const responses: Record<string, unknown> = { ...o.ok };
  const errs = new Set([
    ...(o.public ? [400, 408, 431, 500] : COMMON),
    ...(method === 'get' ? [] : WITH_BODY),
    ...(o.errors ?? []),
  ]);
  for (const s of [...errs].sort())
    responses[String(s)] = { $ref: `#/components/responses/Error${s}` };
  return {
    operationId: o.id,
    summary: o.summary,
    ...(o.description ? { description: o.description } : {}),
    tags: [o.tag],
    ...(o.public ? { security: [] } : {}),
    ...(o.params ? { parameters: o.params } : {}),
    ...(o.body ? { requestBody: o.body } : {}),
    responses,
  };
}

export const ok = (
  description: string,
  body: string,
  headers: Record<string, unknown> = {},
  status = '200',
) => ({
  [status]: {
    description,
    headers: { 'X-Request-Id': header('X-Request-Id'), ...RATE, ...headers },
    content: json(body),
  },
});

export const ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
export const LIST = [param('limit'), param('cursor')];
export const IMAGE_BODY = { type: 'string', contentMediaType: 'application/octet-stream' };
