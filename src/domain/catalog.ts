// Catalog types: the models an operator sells, their input fields, price expression and backend.
// Loading and validating a catalog file lives in catalog-load.ts; this file is pure types and lookups.

export type FieldType = 'text' | 'url' | 'number' | 'toggle' | 'enum';
export type InputValue = string | number | boolean;
export type ResolvedInputs = Record<string, InputValue>;

export interface FieldDef {
  name: string;
  type: FieldType;
  required: boolean;
  default: InputValue | null;
  /** What people read in the studio's form; else the name with _ as spaces and a capital first letter. */
  label?: string;
  description?: string;
  media?: 'image';
  values?: (string | number)[];
  /** An enum's text per value (keyed by the value as a string), for people; else the value. */
  labels?: Record<string, string>;
  minimum?: number;
  maximum?: number;
  integer?: boolean;
  maxLength?: number;
}

export type ModelOutput = { type: 'file'; contentType: string } | { type: 'text' };

/** One of a model's examples (catalog-examples.ts): its inputs as written, image inputs and output as files. */
export interface ModelExample {
  title?: string;
  inputs: Record<string, InputValue>;
  /** Image inputs given as files beside the catalog, by field name. */
  files: Record<string, { file: string; contentType: string }>;
  output: { file: string; contentType: string } | { text: string };
}

/** A CEL expression per name, over the resolved inputs (the same environment as `price`). */
export type CelMap = Record<string, string>;

/**
 * Who renders a model (docs/backends.md): `driver` names one of the drivers the catalog is loaded
 * with, and the rest of the block is that driver's own, as its check made it (src/backends/<driver>/,
 * listed in src/backends/drivers.ts). Nothing here knows a driver. Secrets are kept as written
 * (`${env:NAME}`) here and resolved from the environment at start.
 */
export interface BackendBinding {
  driver: string;
}

export interface ModelDef {
  id: string;
  name: string;
  kind: 'video' | 'image' | 'text';
  description: string;
  output: ModelOutput;
  fields: FieldDef[];
  /** CEL expression over the resolved inputs (as `inputs.<name>` and bare `<name>`) yielding integer cents. */
  price: string;
  backend: BackendBinding;
  /** Seconds one render attempt may take before it is killed. */
  timeLimitSeconds: number;
  /** Attempts before a retryable failure becomes final. */
  maxAttempts: number;
  /** Renders of this model running at once across the whole cluster (e.g. what a GPU server takes); unset = no limit. */
  concurrency?: number;
  /**
   * How a chat request of /openai/v1 becomes this text model's inputs (required on text models): the
   * last user message's text goes to the text field `input`; the other fields take their defaults.
   */
  openai?: { input: string };
  /** Inputs to try, with what they make (shown in the studio); empty when the catalog lists none. */
  examples?: ModelExample[];
}
