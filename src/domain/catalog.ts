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
  description?: string;
  media?: 'image';
  values?: (string | number)[];
  minimum?: number;
  maximum?: number;
  integer?: boolean;
  maxLength?: number;
}

export type ModelOutput = { type: 'file'; contentType: string } | { type: 'text' };

/** Which renderer serves a model. `local` names a built-in renderer in src/backends/local. */
export type BackendBinding = { driver: 'local'; renderer: string };

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
}
