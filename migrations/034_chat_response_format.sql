-- A chat request's output format (`response_format` of /openai/v1/chat/completions, `text.format` of
-- /openai/v1/responses: JSON mode or a JSON schema), stored beside its messages for a model whose
-- backend is itself a chat server, which is sent it as it is. Written in the statement that creates
-- the generation and its messages, read by the claim with them. Nullable: a request that asks for
-- text (the default) stores none, and the previous release's inserts leave it out.
ALTER TABLE generation_messages
  ADD COLUMN response_format jsonb
  CHECK (response_format IS NULL OR jsonb_typeof(response_format) = 'object');
