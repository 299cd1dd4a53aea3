// The entry of the text model's worker threads (text-pool.ts). Built (`npm run build`: dist/), its
// siblings are JavaScript and load as they are. From the sources, a worker thread starts without the
// parent's module hooks when the parent runs under a test runner, so it registers tsx itself to load
// the TypeScript (as bin/rendergate.mjs does). Errors cross the thread boundary as plain data: a
// structured clone would keep a RenderError's message but lose its code and retryable flag.
import fs from 'node:fs';
import { URL } from 'node:url';

const built = fs.existsSync(new URL('./text-shot-list.js', import.meta.url));
if (!built) (await import('tsx/esm/api')).register();
const ext = built ? 'js' : 'ts';
const { shotListText } = await import(`./text-shot-list.${ext}`);
const { RenderError } = await import(`../types.${ext}`);

export default function run(inputs) {
  try {
    return { ok: true, text: shotListText(inputs) };
  } catch (e) {
    if (e instanceof RenderError)
      return { ok: false, code: e.code, message: e.message, retryable: e.retryable };
    throw e;
  }
}
