-- The messages of a chat request made through /openai/v1 for a model whose backend is itself a chat
-- server (driver: openai): that backend is sent the conversation as the client wrote it, not the
-- catalog's messages. Written in the transaction that creates the generation, so a worker that claims
-- the render always finds them; kept beside the generation (not in its inputs, which stay the priced
-- and shown fields).
CREATE TABLE generation_messages (
  generation_id text PRIMARY KEY REFERENCES generations (id) ON DELETE CASCADE,
  messages      jsonb NOT NULL CHECK (jsonb_typeof(messages) = 'array')
);
