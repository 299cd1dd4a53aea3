// Chat completions (/openai/v1): a thin translation onto the generations service. A chat request is a
// render of a catalog text model, created exactly as `POST /v1/generations` creates one (same key,
// price, charge, daily cap, idempotency, test keys) and answered when it is final, through the same
// waiter as `Prefer: wait`. A model whose backend is itself a chat server is sent the conversation as
// it is, and its text is followed as the backend streams it (LiveText), from any process.
import crypto from 'node:crypto';
import type { Catalog, CompiledModel } from '../domain/catalog-load.ts';
import { chatModels, parseChatRequest, type ChatRequest } from '../domain/chat.ts';
import { parseResponsesRequest } from '../domain/responses.ts';
import type { LiveText } from '../queue/live-text.ts';
import { StreamedText } from '../queue/streamed-text.ts';
import type { Generations } from './generations.ts';
import type { Principal } from '../domain/principal.ts';
import { countTokens, warm, type TokenCounts } from './chat-usage.ts';

/**
 * The longest a chat answer waits for its render (docs/api.md "OpenAI-compatible endpoints": answered
 * when final, within 60 s).
 */
export const CHAT_WAIT_SECONDS = 60;

export interface ChatStarted {
  request: ChatRequest;
  id: string;
  /** Unix seconds of the generation's creation. */
  created: number;
  replayed: boolean;
  /** What the render was charged (0 for a test key's). */
  costCents: number;
}

/** The generation as the public API shows it, as far as a chat answer needs it. */
export interface FinalGeneration {
  id: string;
  status: 'queued' | 'succeeded' | 'failed' | 'refunded';
  textOutput?: string;
  error?: { code: string; message: string };
  /**
   * The counts its backend reported, or null when it reported none, when known here: this
   * process's worker rendered it, or the row the waiter read had them (so nobody asks the database
   * again). Absent: not known here.
   */
  tokens?: TokenCounts | null;
}

export class ChatCompletions {
  constructor(
    private catalog: Catalog,
    private generations: Generations,
    private live?: LiveText,
  ) {
    // The token counter's table loads in the background, before the first answer needs it.
    if (this.models().length > 0) void warm();
  }

  /** The models offered: the catalog's text models. */
  models(): CompiledModel[] {
    return chatModels(this.catalog);
  }

  /**
   * Creates the render of a chat request: `idempotencyKey` as the client sent it, or one made here (a
   * request without one is never a replay).
   */
  async start(
    p: Principal,
    body: unknown,
    idempotencyKey: string | undefined,
  ): Promise<ChatStarted> {
    return this.startRequest(p, parseChatRequest(this.catalog, body), idempotencyKey);
  }

  /** The same for a Responses API request (POST /openai/v1/responses). */
  async startResponse(
    p: Principal,
    body: unknown,
    idempotencyKey: string | undefined,
  ): Promise<ChatStarted> {
    return this.startRequest(p, parseResponsesRequest(this.catalog, body), idempotencyKey);
  }

  /** Creates the render of a request already read (chat completions' or the Responses API's). */
  async startRequest(
    p: Principal,
    request: ChatRequest,
    idempotencyKey: string | undefined,
  ): Promise<ChatStarted> {
    const messages = request.model.chatServer ? request.messages : undefined;
    const created = await this.generations.create(
      p,
      request.render,
      idempotencyKey ?? `chat-${crypto.randomUUID()}`,
      messages ? { messages, responseFormat: request.responseFormat } : {},
    );
    const id = created.body.id as string;
    return {
      request,
      id,
      created: Math.floor(Date.parse(created.body.createdAt as string) / 1000),
      replayed: created.replayed,
      costCents: created.body.costCents as number,
    };
  }

  /**
   * The tokens of a request and its answer `g`: the counts its backend reported (a chat server's
   * `usage`), else counted in o200k_base: what reached the model (the whole conversation for a chat
   * server, else the text its input field got) and the answer.
   */
  async tokens(s: ChatStarted, g: FinalGeneration): Promise<TokenCounts> {
    const { request } = s;
    const reported =
      g.tokens !== undefined
        ? g.tokens
        : request.model.chatServer
          ? await this.generations.reportedTokens(s.id)
          : null;
    if (reported) return reported;
    const answer = g.textOutput ?? '';
    const sent = request.model.chatServer
      ? request.messages
      : [{ role: 'user', content: Object.values(request.render.inputs)[0] ?? '' }];
    return countTokens(sent, answer);
  }

  /**
   * The generation once final, or as it is after CHAT_WAIT_SECONDS (or when `closed` fires): through the
   * `Prefer: wait` waiter, or sooner when this process's worker rendered it and says it succeeded.
   * `p`: who started it (a test key's render is read back as a test generation).
   */
  async final(p: Principal, id: string, closed: AbortSignal): Promise<FinalGeneration> {
    const stop = new AbortController();
    let unsubscribe = () => {};
    const rendered = new Promise<FinalGeneration>((resolve) => {
      if (this.live) {
        unsubscribe = this.live.subscribe(id, {
          done: (text, tokens) => {
            this.generations.forget(id); // so that a poll right after this answer sees it succeeded
            // What the worker recorded with it: the counts, or none (a round trip saved).
            resolve({ id, status: 'succeeded', textOutput: text, tokens: tokens ?? null });
          },
        });
      }
    });
    const waited = this.generations
      .waitJson(p, id, CHAT_WAIT_SECONDS, AbortSignal.any([closed, stop.signal]))
      .then((held): FinalGeneration => {
        const g = JSON.parse(held.json) as FinalGeneration;
        // The counts came with the row (none reported: null), so tokens() asks nothing more.
        return held.tokens === undefined ? g : { ...g, tokens: held.tokens };
      });
    try {
      return await Promise.race([rendered, waited]);
    } finally {
      unsubscribe();
      stop.abort();
      waited.catch(() => undefined);
    }
  }

  /**
   * Follows the text of generation `id` as its backend streams it, on this process or another:
   * `onText` gets the text so far, then each piece, as streamed-text.ts decides. `rest(textOutput)`
   * is what remains to send once final (null: the client has text that is not its start).
   */
  follow(
    id: string,
    onText: (piece: string) => void,
  ): { stop: () => void; rest: (text: string) => string | null } {
    const streamed = new StreamedText(onText);
    const stop = this.live
      ? this.live.subscribe(id, { piece: (p) => streamed.piece(p) })
      : () => {};
    return { stop, rest: (text) => streamed.rest(text) };
  }
}
