// The contract between the render pipeline and whatever actually renders a model.
import type { ResolvedInputs } from '../domain/catalog.ts';
import type { ChatMessage } from '../domain/chat.ts';
import type { RenderFailureCode } from '../domain/render-failures.ts';

export type RenderOutput =
  | { kind: 'file'; path: string; contentType: string } // a finished file on local disk; the caller moves it to storage
  | { kind: 'text'; text: string; tokens?: ReportedTokens };

/** The token counts a chat server reported for its answer (OpenAI's `usage`). */
export interface ReportedTokens {
  input: number;
  output: number;
}

export interface RenderContext {
  signal: AbortSignal;
  /** Called with a fraction 0..1 as the render advances. */
  progress: (fraction: number) => void;
  /** A private scratch directory that the caller removes after the render, whatever the outcome. */
  workDir: string;
  /** Seconds the render may take before it is killed. */
  timeLimitSeconds: number;
  /**
   * This attempt's own id (the generation id and the attempt number): what a backend names the job by
   * on a model server (a Cog prediction id), so that two attempts of one render never share a name.
   */
  attemptId: string;
  /**
   * The bytes of an input image given as an upload `url` of the render's account (docs/api.md "Uploads"),
   * read from storage, never over the network; null when `url` is not an upload address. A render whose
   * upload is gone fails permanently (RenderError, not retryable).
   */
  readUpload: (url: string) => Promise<{ bytes: Buffer; contentType: string } | null>;
  /** The server of the model's pool this render was given at claim (claim.ts); unset for other backends. */
  backendUrl?: string;
  /**
   * A chat request's conversation (/openai/v1), for a backend that is itself a chat server: sent as it
   * is instead of the catalog's messages. Unset for renders made otherwise.
   */
  messages?: ChatMessage[];
  /** A chat request's output format (`response_format` other than text), for a chat server. */
  responseFormat?: Record<string, unknown>;
  /** Called with each piece of a text output as the backend streams it (a chat stream passes them on). */
  textPiece?: (piece: string) => void;
}

export interface ModelBackend {
  run(inputs: ResolvedInputs, ctx: RenderContext): Promise<RenderOutput>;
  /**
   * The input addresses `run` fetches itself through the address guard, in the order it fetches them
   * (an upload address among them is read from storage instead). A test render, which runs nothing,
   * checks these as the fetch would (local/input-check.ts), so it is refused where a live render
   * is. Absent: the backend fetches no input (a model server is sent the addresses as they are).
   */
  inputUrls?(inputs: ResolvedInputs): string[];
}

/**
 * A failure of a render. `retryable` failures (timeouts, 5xx and connection resets of an input server,
 * a model server that is briefly down) are tried again with backoff; the rest fail the render at once.
 */
export class RenderError extends Error {
  /** How long the server asked us to wait before trying again (its Retry-After), when it said. */
  readonly retryAfterSeconds?: number;
  constructor(
    readonly code: RenderFailureCode,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options);
    if (options?.retryAfterSeconds !== undefined)
      this.retryAfterSeconds = options.retryAfterSeconds;
    this.name = 'RenderError';
  }
}
