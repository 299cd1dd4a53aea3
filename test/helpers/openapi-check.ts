// Checks an answer of the service against the OpenAPI document it serves: the status is one the
// operation lists, each header the response describes is present when required and matches its
// schema, and a JSON body validates against its schema. client() runs it on every /v1 answer, so every
// integration test is also a check that the code and the document have not drifted apart.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
type Doc = {
  paths: Record<string, Record<string, any>>;
  components: Record<string, Record<string, any>>;
};

const pointer = (parts: string[]) =>
  '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class OpenApiChecker {
  // Compiling is the cost here (the service under test shares this event loop): first error only, no code optimising.
  readonly #ajv = new Ajv2020({ strict: false, allErrors: false, code: { optimize: false } });
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #routes: { method: string; re: RegExp; template: string }[] = [];
  readonly #headerValidators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Doc) {
    addFormats(this.#ajv);
    this.#ajv.addSchema(doc, 'doc');
    for (const [template, item] of Object.entries(doc.paths)) {
      const re = new RegExp(
        '^' +
          template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+') +
          '$',
      );
      for (const method of Object.keys(item)) this.#routes.push({ method, re, template });
    }
  }

  /**
   * Compiles every schema the document uses (a broken $ref fails here), one at a time between turns of
   * the event loop: the service under test runs in this process, and a second of compiling in one go
   * would look like a stalled loop to its watch. Checks compile what they need lazily otherwise.
   */
  async compileAll(): Promise<number> {
    const doc = this.doc;
    const pointers = Object.keys(doc.components.schemas).map((name) => [
      'components',
      'schemas',
      name,
    ]);
    for (const name of Object.keys(doc.components.responses ?? {}))
      pointers.push(['components', 'responses', name, 'content', 'application/json', 'schema']);
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const [status, r] of Object.entries<any>(op.responses)) {
          if (r.content?.['application/json'])
            pointers.push([
              'paths',
              template,
              method,
              'responses',
              status,
              'content',
              'application/json',
              'schema',
            ]);
        }
      }
    }
    for (const p of pointers) {
      this.#validate(pointer(p), null);
      await new Promise((r) => setImmediate(r));
    }
    return pointers.length;
  }

  #validate(ptr: string, value: unknown): string | null {
    let v = this.#validators.get(ptr);
    if (!v) {
      v = this.#ajv.compile({ $ref: 'doc' + ptr });
      this.#validators.set(ptr, v);
    }
    return v(value) ? null : this.#ajv.errorsText(v.errors, { dataVar: 'body' });
  }

  #deref(obj: any): any {
    while (obj && typeof obj.$ref === 'string') {
      obj = obj.$ref
        .slice(2)
        .split('/')
        .map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce((o: any, k: string) => o?.[k], this.doc);
    }
    return obj;
  }

  /** Problems with one answer; an empty list when it is what the document says. */
  check(method: string, urlPath: string, status: number, headers: Headers, text: string): string[] {
    const path = urlPath.split('?')[0];
    const m = method.toLowerCase();
    const route = this.#routes.find((r) => r.method === m && r.re.test(path));
    const problems: string[] = [];
    const where = `${method} ${path} → ${status}`;
    if (!route) {
      // No operation: an unknown route or method, answered with the error body.
      if (!path.startsWith('/v1/') && path !== '/v1') return [];
      const err = text
        ? this.#validate(pointer(['components', 'schemas', 'Error']), safeJson(text))
        : 'no body';
      return err ? [`${where}: unrouted answer is not an Error: ${err}`] : [];
    }
    const op = this.doc.paths[route.template][m];
    const responseRef =
      op.responses[String(status)] ??
      op.responses[`${String(status)[0]}XX`] ??
      op.responses.default;
    if (!responseRef)
      return [`${where}: status not in the document (${Object.keys(op.responses).join(', ')})`];
    const response = this.#deref(responseRef);
    for (const [name, h] of Object.entries<any>(response.headers ?? {})) {
      const header = this.#deref(h);
      const value = headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${where}: header ${name} missing`);
        continue;
      }
      const key = JSON.stringify(header.schema ?? {});
      let hv = this.#headerValidators.get(key);
      if (!hv) {
        hv = this.#ajv.compile(header.schema ?? {});
        this.#headerValidators.set(key, hv);
      }
      if (!hv(value))
        problems.push(
          `${where}: header ${name}: ${JSON.stringify(value)} does not match ${JSON.stringify(header.schema)}`,
        );
    }
    if (status === 304 || m === 'head') return problems;
    const type = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const content = response.content as Record<string, any> | undefined;
    if (!content)
      return text ? [...problems, `${where}: a body the document does not describe`] : problems;
    const mediaKey = content[type] ? type : content['*/*'] ? '*/*' : undefined;
    if (!mediaKey)
      return [
        ...problems,
        `${where}: Content-Type ${type} not in ${Object.keys(content).join(', ')}`,
      ];
    if (mediaKey === 'application/json') {
      const at = responseRef.$ref
        ? [
            ...(responseRef.$ref as string).slice(2).split('/'),
            'content',
            'application/json',
            'schema',
          ]
        : [
            'paths',
            route.template,
            m,
            'responses',
            String(status),
            'content',
            'application/json',
            'schema',
          ];
      const err = this.#validate(pointer(at), safeJson(text));
      if (err) problems.push(`${where}: ${err}`);
    }
    return problems;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { notJson: text.slice(0, 200) };
  }
}

const checkers = new Map<string, Promise<OpenApiChecker>>();

/** The checker of the document a running service serves (fetched once per base URL). */
export function checkerFor(base: string): Promise<OpenApiChecker> {
  let c = checkers.get(base);
  if (!c) {
    c = fetch(base + '/v1/openapi.json').then(async (r) => {
      if (r.status !== 200) throw new Error(`GET /v1/openapi.json -> ${r.status}`);
      return new OpenApiChecker(await r.json());
    });
    c.catch(() => checkers.delete(base));
    checkers.set(base, c);
  }
  return c;
}

/**
 * A fetch for the SDK under test that checks every answer of the service against its document, as
 * client() does: the SDK's tests are drift checks too. The body is read and handed on unchanged.
 */
export function checkedFetch(
  base: string,
  onProblem: (problems: string[]) => void = (p) => {
    throw new Error(p.join('\n'));
  },
): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(
      typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
    );
    if (!url.pathname.startsWith('/v1/')) return res;
    // a live event stream is read as it comes (the test of its events checks them)
    if (res.ok && /^text\/event-stream/.test(res.headers.get('content-type') ?? '')) return res;
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = /json/.test(res.headers.get('content-type') ?? '')
      ? new TextDecoder().decode(bytes)
      : bytes.length > 0
        ? '<binary>'
        : '';
    const problems = (await checkerFor(base)).check(
      init?.method ?? 'GET',
      url.pathname,
      res.status,
      res.headers,
      text,
    );
    if (problems.length > 0) onProblem([`answer differs from /v1/openapi.json:`, ...problems]);
    return new Response(res.status === 304 ? null : bytes, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}
