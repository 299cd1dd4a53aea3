// generation_messages (migrations/016): the conversation of a chat request for a model whose backend
// is a chat server. Created with its generation, in the same statement (createGenerationWithMessages
// in db/generations.ts); read by the claim that starts its render (db/generations-claim.ts).

/** A stored message: domain/chat.ts ChatMessage. */
export interface StoredMessage {
  role: string;
  content: string;
}
