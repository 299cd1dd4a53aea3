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

/** Servers of the operator's own: `urls` is a pool, each server taking `concurrencyPerUrl` renders at once. */
export interface ServerPool {
  urls: string[];
  concurrencyPerUrl: number;
}

/**
 * Who renders a model (docs/backends.md). `local` names a built-in renderer in
 * src/backends/local; the others are thin clients of a model server's own protocol (src/backends/<driver>).
 * Secrets are kept as written (`${env:NAME}`) here and resolved from the environment at start.
 */
export type BackendBinding =
  | { driver: 'local'; renderer: string }
  | ({ driver: 'cog'; inputs?: CelMap } & ServerPool)
  | ({
      driver: 'comfyui';
      workflow: string;
      graph: Record<string, unknown>;
      bindings: CelMap;
      outputNode?: string;
    } & ServerPool)
  | ({
      driver: 'openai';
      model: string;
      apiKey?: string;
      messages: { role: string; content: string }[];
      params?: CelMap;
    } & ServerPool)
  | {
      driver: 'replicate';
      model: string;
      version?: string;
      apiToken: string;
      baseUrl: string;
      inputs?: CelMap;
    }
  | { driver: 'fal'; app: string; apiKey: string; baseUrl: string; inputs?: CelMap };

export type RemoteDriver = Exclude<BackendBinding['driver'], 'local'>;

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
