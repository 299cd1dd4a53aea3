// generation_messages (migrations/016): the conversation of a chat request for a model whose backend
// is a chat server. Created with its generation, in the same statement (createGenerationWithMessages
// in db/generations.ts); read by the worker that renders it.
import type { Db } from './pool.ts';

/** A stored message: domain/chat.ts ChatMessage. */
export interface StoredMessage {
  role: string;
  content: string;
}

/** The conversation of a generation; null when it was not made from a chat request. */
export async function generationMessages(
  db: Db,
  generationId: string,
): Promise<StoredMessage[] | null> {
  const { rows } = await db.query<{ messages: StoredMessage[] }>({
    name: 'gen-messages',
    text: 'SELECT messages FROM generation_messages WHERE generation_id = $1',
    values: [generationId],
  });
  return rows[0]?.messages ?? null;
}
