// OpenAI-compatible chat servers (vLLM, llama.cpp, Ollama): the catalog block (catalog.ts), the
// streaming client (index.ts), a pool of servers, and the fake.
import type { Driver } from '../shared/driver.ts';
import { poolOf } from '../shared/pool.ts';
import { openAiCatalog, type OpenAiBinding } from './catalog.ts';
import { createOpenAiBackend } from './index.ts';

export const openAiDriver: Driver<OpenAiBinding> = {
  ...openAiCatalog,
  create: createOpenAiBackend,
  pool: poolOf,
  fakes: ['test/fakes/openai.ts'],
};
