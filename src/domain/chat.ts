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
}

const ROLES = ['system', 'developer', 'user', 'assistant'];
const MAX_MESSAGES = 1000;

const bad = (param: string, message: string) =>
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
  v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);

/** Reads a chat request; 404 MODEL_NOT_FOUND for a model /openai/v1 does not offer, 400 naming the parameter. */
export function parseChatRequest(catalog: Catalog, body: unknown): ChatRequest {
  const b = objectBody(body);
  if (typeof b.model !== 'string' || b.model === '')
    throw bad('model', 'must name a model (GET /openai/v1/models lists them)');
  const model = catalog.get(b.model);
  if (!model || !chatModels(catalog).includes(model)) {
    throw new ApiError(
      'MODEL_NOT_FOUND',
      `The model ${JSON.stringify(b.model.slice(0, 200))} does not exist or is not a text model.`,
      [{ field: 'model', message: 'not a text model of the catalog' }],
    );
  }
  for (const p of ['tools', 'functions', 'tool_choice', 'function_call'] as const) {
    if (present(b[p]) && b[p] !== 'none') throw bad(p, 'tools are not supported by this model');
  }
  if (b.n !== undefined && b.n !== null) {
    if (!Number.isInteger(b.n) || (b.n as number) < 1) throw bad('n', 'must be a positive integer');
    if (b.n !== 1) throw bad('n', 'only one choice (n = 1) is supported');
  }
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean')
    throw bad('stream', 'must be a boolean');
  const messages = parseMessages(b.messages);
  const lastUser = messages.findLast((m) => m.role === 'user');
  if (!lastUser) throw bad('messages', 'must contain a message with role "user"');
  return {
    model,
    messages,
    stream: b.stream === true,
    render: { modelId: model.id, inputs: { [model.def.openai!.input]: lastUser.content } },
  };
}
