// An OpenAI Responses API request (POST /openai/v1/responses) read as the same render a chat request
// makes (chat.ts): `input` a string or a list of messages, `instructions` a system message in front.
// Only what a text model can answer is taken; what would change the answer and cannot be honoured
// (tools, stored conversations, log-probabilities, a JSON format for a model that writes prose) is
// refused naming its parameter, as OpenAI's API does.
import type { Catalog } from './catalog-load.ts';
import { objectBody } from './body.ts';
import {
  bad,
  chatModel,
  formatOf,
  refuseUnsupported,
  renderOf,
  type ChatMessage,
  type ChatRequest,
} from './chat.ts';

const ROLES = ['system', 'developer', 'user', 'assistant'];
const MAX_ITEMS = 1000;
const TEXT_PARTS = ['input_text', 'output_text', 'text'];

/** One content part list (or string) as text. */
function partsText(raw: unknown, param: string): string {
  if (typeof raw === 'string') return raw;
  if (!Array.isArray(raw)) throw bad(param, 'must be a string or a list of content parts');
  return raw
    .map((part, j) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      if (p && TEXT_PARTS.includes(p.type as string) && typeof p.text === 'string') return p.text;
      throw bad(
        `${param}[${j}]`,
        `content parts of type ${JSON.stringify(String(p?.type)).slice(0, 40)} are not supported; send text`,
      );
    })
    .join('');
}

/** `input`: a string (one user message) or a list of message items. */
function inputMessages(raw: unknown): ChatMessage[] {
  if (typeof raw === 'string') return [{ role: 'user', content: raw }];
  if (!Array.isArray(raw) || raw.length === 0)
    throw bad('input', 'must be a string or a non-empty list of messages');
  if (raw.length > MAX_ITEMS) throw bad('input', `must have at most ${MAX_ITEMS} items`);
  return raw.map((item, i) => {
    const param = `input[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      throw bad(param, 'must be a message { role, content }');
    const { type, role, content } = item as Record<string, unknown>;
    if (type !== undefined && type !== 'message')
      throw bad(`${param}.type`, 'only message items are supported (no tools or references)');
    if (typeof role !== 'string' || !ROLES.includes(role))
      throw bad(`${param}.role`, `must be one of ${ROLES.join(', ')}`);
    return { role, content: partsText(content, `${param}.content`) };
  });
}

/** The Responses API's `text.format` as chat completions' `response_format` (its JSON schema nested). */
function chatFormat(f: unknown): unknown {
  if (!f || typeof f !== 'object') return f;
  const { type, ...rest } = f as Record<string, unknown>;
  return type === 'json_schema' ? { type, json_schema: rest } : f;
}

/** Reads a Responses request as a chat request; 404 MODEL_NOT_FOUND, 400 naming the parameter. */
export function parseResponsesRequest(catalog: Catalog, body: unknown): ChatRequest {
  const b = objectBody(body);
  const model = chatModel(catalog, b.model);
  const text = b.text as { format?: unknown } | null | undefined;
  if (text !== undefined && text !== null && (typeof text !== 'object' || Array.isArray(text)))
    throw bad('text', 'must be an object');
  const format = chatFormat(text?.format);
  refuseUnsupported(model, b, { param: 'text.format', value: format });
  for (const p of ['previous_response_id', 'conversation', 'prompt'] as const) {
    if (b[p] !== undefined && b[p] !== null)
      throw bad(p, 'stored conversations and prompts are not supported; send the whole input');
  }
  if (b.background === true) throw bad('background', 'background responses are not supported');
  if (Array.isArray(b.include) && b.include.some((i) => String(i).includes('logprobs')))
    throw bad('include', 'log probabilities are not available');
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean')
    throw bad('stream', 'must be a boolean');
  if (b.instructions !== undefined && b.instructions !== null && typeof b.instructions !== 'string')
    throw bad('instructions', 'must be a string');
  const messages = [
    ...(typeof b.instructions === 'string' && b.instructions !== ''
      ? [{ role: 'system', content: b.instructions }]
      : []),
    ...inputMessages(b.input),
  ];
  return {
    model,
    messages,
    stream: b.stream === true,
    includeUsage: true,
    responseFormat: formatOf(format),
    render: renderOf(model, messages),
  };
}
