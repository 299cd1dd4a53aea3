// @rendergate/client: a typed client for the Rendergate API.
export { Rendergate, type ClientOptions, type RunOptions } from './client.ts';
export { RendergateError, type ClientErrorCode } from './errors.ts';
export { isFinal, type CreateOptions, type WaitOptions } from './generations.ts';
export type { PagedList } from './pages.ts';
export { verifyWebhook, type VerifyOptions } from './webhooks.ts';
export type * from './types.ts';
export type { paths, components, operations } from './schema.d.ts';
