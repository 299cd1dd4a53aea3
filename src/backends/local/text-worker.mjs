// The entry of the text model's worker threads (text-pool.ts). A worker thread starts without the
// parent's module hooks when the parent runs under a test runner, so it registers tsx itself to load
// the TypeScript sources (as bin/rendergate.mjs does). Errors cross the thread boundary as plain data:
// a structured clone would keep a RenderError's message but lose its code and retryable flag.
import { register } from 'tsx/esm/api';

register();
const { shotListText } = await import('./text-shot-list.ts');
const { RenderError } = await import('../types.ts');

export default function run(inputs) {
  try {
    return { ok: true, text: shotListText(inputs) };
  } catch (e) {
    if (e instanceof RenderError) return { ok: false, code: e.code, message: e.message, retryable: e.retryable };
    throw e;
  }
}
