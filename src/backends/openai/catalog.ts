// An OpenAI-compatible chat server's block in the catalog: a pool of servers, the served model's
// name, an optional key, the messages (each content CEL) and extra request parameters (CEL). It
// answers with text, and being a chat server itself it is sent a chat request's own conversation
// (/openai/v1).
import type { CelMap } from '../../domain/catalog.ts';
import type { CatalogDriver } from '../../domain/catalog-driver.ts';
import { isObject, isText } from '../../domain/catalog-check.ts';
import { checkCelMap, checkSecretForm } from '../shared/catalog-checks.ts';
import { checkPool, POOL_KEYS, type ServerPool } from '../shared/pool.ts';

export interface OpenAiBinding extends ServerPool {
  driver: 'openai';
  model: string;
  apiKey?: string;
  messages: { role: string; content: string }[];
  params?: CelMap;
}

export const openAiCatalog: CatalogDriver<OpenAiBinding> = {
  keys: [...POOL_KEYS, 'model', 'apiKey', 'messages', 'params'],
  check(raw, bad) {
    const pool = checkPool(raw, bad);
    if (!isText(raw.model)) bad('backend.model must name the served model');
    const apiKey = checkSecretForm(raw, 'apiKey', bad, false);
    const messages = raw.messages;
    if (
      !Array.isArray(messages) ||
      messages.length === 0 ||
      !messages.every(
        (m) => isObject(m) && isText(m.role) && isText(m.content) && Object.keys(m).length === 2,
      )
    ) {
      return void bad(
        'backend.messages must be a non-empty list of { role, content } (content a CEL expression)',
      );
    }
    const params = checkCelMap(raw.params, 'params', bad);
    return (
      pool && {
        driver: 'openai',
        ...pool,
        model: raw.model as string,
        ...(apiKey ? { apiKey } : {}),
        messages: messages as { role: string; content: string }[],
        ...(params ? { params } : {}),
      }
    );
  },
  checkOutput(output, bad) {
    if (output.type !== 'text')
      bad('the openai driver answers with text: the model needs output {type: text}');
  },
  // Each message's content by its index, then the parameters.
  cel: (b) => ({
    messages: Object.fromEntries(b.messages.map((m, i) => [String(i), m.content])),
    params: b.params,
  }),
  celStrings: ['messages'],
  chatServer: true,
};
