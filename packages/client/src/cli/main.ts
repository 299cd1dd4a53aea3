// rendergate-cli: the API from a shell. Exit codes: 0 done, 1 the render failed or was refunded,
// 2 a usage error, 3 an API or network error, 130 interrupted (Ctrl-C cancels a running `run`).
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { Rendergate } from '../client.js';
import { RendergateError } from '../errors.js';
import { readImageFile, saveResponse } from '../files.js';
import type { Generation, GenerationStatus } from '../types.js';
import { UsageError, parseInputs } from './inputs.js';
import { human } from './output.js';
import { progressDisplay } from './progress.js';

const USAGE = `usage: rendergate-cli <command> [options]
  models                                  the catalog
  model ID                                one model and its inputs
  me                                      the account and key
  quote MODEL -i name=value ...           the price of a render
  run MODEL -i name=value ... [--out F]   render and wait (Ctrl-C cancels it); --out saves the file or text
  get ID [--wait]                         one generation (--wait: until it is final)
  list [--status S] [--model ID] [--limit N]
  cancel ID | delete ID
  download ID [--out FILE]
  upload FILE                             a PNG, JPEG or WebP image; prints its url
inputs: -i name=value, typed from the model (numbers, true/false, enum values);
        -i image=@photo.png uploads the file, -i text=@story.txt reads it
options: --json (the default when stdout is not a terminal), --api-key (RENDERGATE_API_KEY),
         --base-url (RENDERGATE_BASE_URL, the server's origin)
exit codes: 0 done, 1 render failed or refunded, 2 usage error, 3 API or network error, 130 interrupted`;

const EXIT = { ok: 0, failed: 1, usage: 2, api: 3, interrupted: 130 } as const;

async function main(argv: string[]): Promise<number> {
  const { values: o, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      input: { type: 'string', short: 'i', multiple: true },
      json: { type: 'boolean' },
      out: { type: 'string', short: 'o' },
      wait: { type: 'boolean' },
      status: { type: 'string' },
      model: { type: 'string' },
      limit: { type: 'string' },
      'api-key': { type: 'string' },
      'base-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [cmd, arg] = positionals;
  if (o.help || !cmd) {
    process.stdout.write(USAGE + '\n');
    return o.help ? EXIT.ok : EXIT.usage;
  }
  const asJson = o.json === true || !process.stdout.isTTY;
  const print = (value: unknown, text: () => string) =>
    process.stdout.write((asJson ? JSON.stringify(value, null, 2) : text()) + '\n');
  const need = (what: string) => arg ?? usage(`${cmd} needs ${what}`);
  const rg = new Rendergate({ apiKey: o['api-key'], baseUrl: o['base-url'] });

  switch (cmd) {
    case 'models': {
      const m = await rg.models.list();
      print(m, () => human.models(m));
      return EXIT.ok;
    }
    case 'model': {
      const m = await rg.models.get(need('a model id'));
      print(m, () => human.model(m));
      return EXIT.ok;
    }
    case 'me': {
      const me = await rg.me();
      print(me, () => human.me(me));
      return EXIT.ok;
    }
    case 'quote': {
      const model = await rg.models.get(need('a model id'));
      const q = await rg.quote(model.id, await parseInputs(rg, model.fields, o.input ?? []));
      print(q, () => human.quote(q));
      return EXIT.ok;
    }
    case 'run':
      return run(rg, need('a model id'), o.input ?? [], o.out, asJson, print);
    case 'get': {
      const g = o.wait
        ? await rg.generations.wait(need('an id'))
        : await rg.generations.get(need('an id'));
      print(g, () => human.generation(g));
      return EXIT.ok;
    }
    case 'list': {
      const limit = o.limit === undefined ? 20 : Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1) usage('--limit must be a whole number ≥ 1');
      const all: Generation[] = [];
      for await (const g of rg.generations.list({
        status: o.status as GenerationStatus | undefined,
        modelId: o.model,
        pageSize: Math.min(100, limit),
      })) {
        all.push(g);
        if (all.length >= limit) break;
      }
      print(all, () => all.map(human.generation).join('\n'));
      return EXIT.ok;
    }
    case 'cancel': {
      const g = await rg.generations.cancel(need('an id'));
      print(g, () => human.generation(g));
      return EXIT.ok;
    }
    case 'delete': {
      const d = await rg.generations.delete(need('an id'));
      print(d, () => `${d.id} deleted`);
      return EXIT.ok;
    }
    case 'download': {
      const id = need('an id');
      const res = await rg.generations.content(id);
      const file = o.out ?? `${id}${extension(res.headers.get('content-type'))}`;
      const bytes = await saveResponse(res, file);
      print(
        { id, file, bytes, contentType: res.headers.get('content-type') },
        () => `saved ${file} (${bytes} bytes)`,
      );
      return EXIT.ok;
    }
    case 'upload': {
      const { bytes, contentType } = await readImageFile(need('a file')).catch((e: Error) =>
        usage(e.message),
      );
      const u = await rg.uploads.create(bytes, contentType);
      print(u, () => `${u.url}  ${u.width}×${u.height}  expires ${u.expiresAt}`);
      return EXIT.ok;
    }
    default:
      return usage(`unknown command ${cmd}`);
  }
}

async function run(
  rg: Rendergate,
  modelId: string,
  inputArgs: string[],
  out: string | undefined,
  asJson: boolean,
  print: (v: unknown, text: () => string) => void,
): Promise<number> {
  const model = await rg.models.get(modelId);
  const inputs = await parseInputs(rg, model.fields, inputArgs);
  const ctl = new AbortController();
  const onSigint = () => ctl.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  const display = !asJson && process.stderr.isTTY ? progressDisplay(process.stderr) : undefined;
  let final: Generation;
  try {
    final = await rg.run(model.id, inputs, {
      signal: ctl.signal,
      onProgress: (g) => display?.update(g),
    });
  } catch (e) {
    display?.stop();
    if (ctl.signal.aborted) {
      process.stderr.write('interrupted: the render was cancelled\n');
      return EXIT.interrupted;
    }
    if (e instanceof RendergateError && e.generation) {
      print(e.generation, () => human.generation(e.generation!));
      return EXIT.failed;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSigint);
  }
  display?.stop();
  if (out !== undefined) {
    if (final.textOutput !== undefined) fs.writeFileSync(out, final.textOutput);
    else await saveResponse(await rg.generations.content(final.id), out);
  }
  print(final, () => human.generation(final) + (out ? `\nsaved ${out}` : ''));
  return EXIT.ok;
}

function extension(type: string | null): string {
  return (
    (
      {
        'video/mp4': '.mp4',
        'image/png': '.png',
        'image/jpeg': '.jpg',
        'image/webp': '.webp',
        'text/plain': '.txt',
      } as Record<string, string>
    )[type ?? ''] ?? ''
  );
}

function usage(message: string): never {
  throw new UsageError(message);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (
      e instanceof UsageError ||
      (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ||
      (e instanceof RendergateError && e.status === 0 && e.code === 'API_KEY_MISSING')
    ) {
      process.stderr.write(`${(e as Error).message}\n\n${USAGE}\n`);
      process.exitCode = EXIT.usage;
    } else if (e instanceof RendergateError) {
      process.stderr.write(
        JSON.stringify({
          status: e.status,
          code: e.code,
          message: e.message,
          details: e.details,
          requestId: e.requestId,
        }) + '\n',
      );
      process.exitCode = EXIT.api;
    } else {
      process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = EXIT.api;
    }
  },
);
