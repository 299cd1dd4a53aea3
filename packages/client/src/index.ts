/// <reference lib="es2022" preserve="true" />
// The directive above is kept in the declarations: a project compiled with tsc's defaults (lib ES5)
// gets the library types (AsyncIterable, WeakSet) these declarations use.
// @rendergate/client: a typed client for the Rendergate API.
export { Rendergate, type ClientOptions, type RunOptions } from './client.js';
export { RendergateError, type ClientErrorCode } from './errors.js';
export { isFinal, type CreateOptions, type WaitOptions } from './generations.js';
export type { PagedList } from './pages.js';
export { verifyWebhook, type VerifyOptions } from './webhooks.js';
export type * from './types.js';
export type { paths, components, operations } from './schema.js';
