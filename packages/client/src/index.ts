// @rendergate/client: a typed client for the Rendergate API.
export { Rendergate, type ClientOptions, type RunOptions } from './client.js';
export { RendergateError, type ClientErrorCode } from './errors.js';
export { isFinal, type CreateOptions, type WaitOptions } from './generations.js';
export type { PagedList } from './pages.js';
export { verifyWebhook, type VerifyOptions } from './webhooks.js';
export type * from './types.js';
export type { paths, components, operations } from './schema.js';
