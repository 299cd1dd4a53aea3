// What the OpenAI operations of the OpenAPI document share: references to its schemas, the headers
// of every answer, and the OpenAI-shaped error responses by status.
export const schema = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const REQUEST_ID = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
export const RATE = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
};

export const errorResponse = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { ...REQUEST_ID, ...headers },
  content: { 'application/json': { schema: schema('OpenAIError') } },
});

export const errors = (statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [String(s), { $ref: `#/components/responses/OpenAIError${s}` }]),
  );
