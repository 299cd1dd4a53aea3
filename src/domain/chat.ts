// An OpenAI-style chat request (/openai/v1/chat/completions) read as a render of a catalog text model:
// which model, the conversation, and the one text that becomes the model's `openai.input` field. What
// a text model cannot take is refused naming the request's parameter, as OpenAI's API does (`param`).
import type { Catalog, CompiledModel } from './catalog-load.ts';
import { ApiError } from './errors.ts';
import { objectBody } from './body.ts';

export interface ChatMessage {
  role: string;
  content: string;
}

export interface ChatRequest {
  model: CompiledModel;
  /** The conversation, each message's content as plain text. */
  messages: ChatMessage[];
  /** The body of the equivalent `POST /v1/generations`. */
  render: { modelId: string; inputs: Record<string, string> };
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk carries `usage`. */
  includeUsage: boolean;
  /** A chat server's output format (`response_format` other than text), passed on as it is. */
  responseFormat?: Record<string, unknown>;
}

const ROLES = ['system', 'developer', 'user', 'assistant'];
const MAX_MESSAGES = 1000;

export const bad = (param: string, message: string) =>
  new ApiError('INVALID_INPUT', `${param}: ${message}`, [{ field: param, message }]);

/** The models /openai/v1 offers: the catalog's text models (each says where a message goes). */
export function chatModels(catalog: Catalog): CompiledModel[] {
  return catalog.compiled.filter((m) => m.def.kind === 'text' && m.def.openai);
}

/** A message's content as text: a string, or a list of text parts; anything else names its parameter. */
function contentText(raw: unknown, param: string): string {
  if (typeof raw === 'string') return raw;
  if (raw === null || raw === undefined) return '';
  if (!Array.isArray(raw)) throw bad(param, 'must be a string or a list of content parts');
  return raw
    .map((part, j) => {
      const type = (part as { type?: unknown } | null)?.type;
      if (type === 'text' && typeof (part as { text?: unknown }).text === 'string')
        return (part as { text: string }).text;
      if (type === 'image_url' || type === 'input_image')
        throw bad(`${param}[${j}]`, 'images are not supported by this model');
      throw bad(
        `${param}[${j}]`,
        `content parts of type ${JSON.stringify(String(type)).slice(0, 40)} are not supported; send text`,
      );
    })
    .join('');
}

function parseMessages(raw: unknown): ChatMessage[] {
  if (!Array.isArray(raw) || raw.length === 0)
    throw bad('messages', 'must be a non-empty list of messages');
  if (raw.length > MAX_MESSAGES)
    throw bad('messages', `must have at most ${MAX_MESSAGES} messages`);
  return raw.map((m, i) => {
    const param = `messages[${i}]`;
    if (m === null || typeof m !== 'object' || Array.isArray(m))
      throw bad(param, 'must be an object { role, content }');
    const { role, content, tool_calls: toolCalls } = m as Record<string, unknown>;
    if (
      role === 'tool' ||
      role === 'function' ||
      (Array.isArray(toolCalls) && toolCalls.length > 0)
    ) {
      throw bad(`${param}.role`, 'tool calls are not supported by this model');
    }
    if (typeof role !== 'string' || !ROLES.includes(role))
      throw bad(`${param}.role`, `must be one of ${ROLES.join(', ')}`);
    return { role, content: contentText(content, `${param}.content`) };
  });
}

const present = (v: unknown) =>
  v !== undefined && v !== null && v !== false && !(Array.isArray(v) && v.length === 0);

/** The model /openai/v1 offers by that name; 404 MODEL_NOT_FOUND naming `model` otherwise. */
export function chatModel(catalog: Catalog, name: unknown): CompiledModel {
  if (typeof name !== 'string' || name === '')
    throw bad('model', 'must name a model (GET /openai/v1/models lists them)');
  const model = catalog.get(name);
  if (!model || !chatModels(catalog).includes(model)) {
    throw new ApiError(
      'MODEL_NOT_FOUND',
      `The model ${JSON.stringify(name.slice(0, 200))} does not exist or is not a text model.`,
      [{ field: 'model', message: 'not a text model of the catalog' }],
    );
  }
  return model;
}

/**
 * Refuses what would change the answer and the model cannot honour: the answer would otherwise be
 * prose where the client expects JSON, log-probabilities or audio (`parse()`,
 * `withStructuredOutput` fail on it). `format` is the requested output format (chat's
 * `response_format`, the Responses API's `text.format`), passed to a chat server as it is.
 */
export function refuseUnsupported(
  model: CompiledModel,
  b: Record<string, unknown>,
  format: { param: string; value: unknown },
) {
  for (const p of ['tools', 'functions', 'tool_choice', 'function_call'] as const) {
    if (present(b[p]) && b[p] !== 'none' && b[p] !== 'auto')
      throw bad(p, 'tools are not supported by this model');
  }
  if (present(b.tools)) throw bad('tools', 'tools are not supported by this model');
  if (present(b.logprobs)) throw bad('logprobs', 'log probabilities are not available');
  if (present(b.top_logprobs) && b.top_logprobs !== 0)
    throw bad('top_logprobs', 'log probabilities are not available');
  if (Array.isArray(b.modalities) && b.modalities.some((m) => m !== 'text'))
    throw bad('modalities', 'this model answers with text only');
  if (present(b.audio)) throw bad('audio', 'this model answers with text only');
  const f = format.value;
  if (f === undefined || f === null) return;
  const type = (f as { type?: unknown }).type;
  if (typeof f !== 'object' || Array.isArray(f) || typeof type !== 'string')
    throw bad(format.param, 'must be an object with a type');
  if (type === 'text') return;
  if (!model.chatServer)
    throw bad(format.param, `${JSON.stringify(type.slice(0, 40))} is not supported; only text`);
  if (!['json_object', 'json_schema'].includes(type))
    throw bad(format.param, 'must be of type text, json_object or json_schema');
}

/**
 * A conversation as a render of `model`: the text that reaches it, bounded and priced whole. A model
 * whose backend is itself a chat server gets every message, so every message's text goes into its
 * `openai.input` field (its limits and its price see all of it); another gets the last user
 * message's text there, as the catalog says.
 */
export function renderOf(
  model: CompiledModel,
  messages: ChatMessage[],
): { modelId: string; inputs: Record<string, string> } {
  const lastUser = messages.findLast((m) => m.role === 'user');
  if (!lastUser) throw bad('messages', 'must contain a message with role "user"');
  const text = model.chatServer ? messages.map((m) => m.content).join('\n') : lastUser.content;
  return { modelId: model.id, inputs: { [model.def.openai!.input]: text } };
}

/** Reads a chat request; 404 MODEL_NOT_FOUND for a model /openai/v1 does not offer, 400 naming the parameter. */
export function parseChatRequest(catalog: Catalog, body: unknown): ChatRequest {
  const b = objectBody(body);
  const model = chatModel(catalog, b.model);
  refuseUnsupported(model, b, { param: 'response_format', value: b.response_format });
  if (b.n !== undefined && b.n !== null) {
    if (!Number.isInteger(b.n) || (b.n as number) < 1) throw bad('n', 'must be a positive integer');
    if (b.n !== 1) throw bad('n', 'only one choice (n = 1) is supported');
  }
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean')
    throw bad('stream', 'must be a boolean');
  const messages = parseMessages(b.messages);
  const opts = b.stream_options as { include_usage?: unknown } | null | undefined;
  return {
    model,
    messages,
    stream: b.stream === true,
    includeUsage: opts?.include_usage === true,
    responseFormat: formatOf(b.response_format),
    render: renderOf(model, messages),
  };
}

/** The output format a chat server is asked for; undefined for text (its default). */
export function formatOf(f: unknown): Record<string, unknown> | undefined {
  if (!f || typeof f !== 'object' || (f as { type?: unknown }).type === 'text') return undefined;
  return f as Record<string, unknown>;
}
