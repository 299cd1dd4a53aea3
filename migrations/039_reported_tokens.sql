-- The token counts a chat server reported for a text render (its `usage`), so that /openai/v1's
-- answers give the backend's own counts where it has them, and count with o200k_base only where it
-- does not (docs/api.md "OpenAI-compatible endpoints"). Null: the backend reported none.
ALTER TABLE generations
  ADD COLUMN input_tokens integer CHECK (input_tokens >= 0),
  ADD COLUMN output_tokens integer CHECK (output_tokens >= 0),
  ADD CONSTRAINT generations_reported_tokens_together
    CHECK ((input_tokens IS NULL) = (output_tokens IS NULL));
