// The `usage` of an /openai/v1 answer (docs/api.md "OpenAI-compatible endpoints"): the backend's own
// token counts where it reported them, otherwise the text counted with OpenAI's `o200k_base`
// encoding (gpt-tokenizer, which carries the encoding in the package: no download at runtime). Its
// table takes about 2 s to load, so it is loaded once, when the first answer needs it or when the
// service starts (warm()), never per request.
import type { ChatMessage } from '../domain/chat.ts';

type Counter = (text: string) => number;
let counter: Promise<Counter> | null = null;

/** Loads the encoding (once); every later count is synchronous work on the text. */
export function warm(): Promise<Counter> {
  counter ??= import('gpt-tokenizer/encoding/o200k_base').then(
    // Special tokens in a client's text (`<|endoftext|>`) are counted as text, never refused.
    (m) => (text: string) =>
      text === '' ? 0 : m.countTokens(text, { disallowedSpecial: new Set() }),
  );
  return counter;
}

/** Tokens OpenAI's chat format adds per message and to prime the answer (its cookbook's count). */
const PER_MESSAGE = 3;
const PRIMING = 3;

export interface TokenCounts {
  input: number;
  output: number;
}

/** The counts of a conversation and its answer in o200k_base, as OpenAI's chat format counts them. */
export async function countTokens(messages: ChatMessage[], answer: string): Promise<TokenCounts> {
  const count = await warm();
  let input = PRIMING;
  for (const m of messages) input += PER_MESSAGE + count(m.role) + count(m.content);
  return { input, output: count(answer) };
}

/** Chat completions' `usage`, with what the render cost. */
export function chatUsage(t: TokenCounts, generationId: string, costCents: number) {
  return {
    prompt_tokens: t.input,
    completion_tokens: t.output,
    total_tokens: t.input + t.output,
    rendergate: { generationId, costCents },
  };
}

/** The Responses API's `usage`, with what the render cost. */
export function responsesUsage(t: TokenCounts, generationId: string, costCents: number) {
  return {
    input_tokens: t.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: t.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: t.input + t.output,
    rendergate: { generationId, costCents },
  };
}
