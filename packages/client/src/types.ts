// Friendly names for the types generated from the OpenAPI document (schema.ts).
import type { components } from './schema.js';

type S = components['schemas'];
export type Generation = S['Generation'];
export type GenerationStatus = S['GenerationStatus'];
export type Model = S['Model'];
export type ModelDetail = S['ModelDetail'];
export type Field = S['Field'];
export type Me = S['Me'];
export type Quote = S['Quote'];
export type Upload = S['Upload'];
export type Deleted = S['Deleted'];
export type WebhookEndpoint = S['WebhookEndpoint'];
export type WebhookEndpointCreate = S['WebhookEndpointCreate'];
export type WebhookDelivery = S['WebhookDelivery'];
export type WebhookEvent = S['WebhookEvent'];
export type EventType = S['EventType'];
export type Usage = S['Usage'];
export type UsageEntry = S['UsageEntry'];
export type UsageGroup = 'day' | 'model' | 'key' | 'member';
export type ErrorBody = S['Error'];
export type ErrorCode = S['ErrorCode'];
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export type InputValue = string | number | boolean;
type RenderRequest = S['RenderRequest'];
/** Ids of the models of the built-in catalog (any other id of your catalog is accepted too). */
export type KnownModelId = RenderRequest['modelId'];
/** A model id: the built-in ones autocomplete, any string is allowed. */
export type ModelId = KnownModelId | (string & {});
/** The inputs of a model: typed for the built-in catalog, a plain record for any other model. */
export type InputsOf<M extends string> = M extends KnownModelId
  ? Extract<RenderRequest, { modelId: M }>['inputs']
  : Record<string, InputValue>;
