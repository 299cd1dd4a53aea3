// `${env:NAME}` in a catalog's backend (docs/backends.md): read from the
// environment once, at start. A missing variable stops the start naming it (never its value). The
// values read are kept so that an error message a model server sends back can be scrubbed of them
// before it reaches a log, a generation's error or the API.
import { stripUserinfo } from '../domain/scrub.ts';

const SECRET = /\$\{env:([^}]*)\}/g;

/** Every `${env:NAME}` a value refers to. */
export function secretNames(value: string): string[] {
  return [...value.matchAll(SECRET)].map((m) => m[1]);
}

export class Secrets {
  private values = new Set<string>();
  readonly missing = new Set<string>();

  constructor(private env: NodeJS.ProcessEnv) {}

  /** The text with each `${env:NAME}` replaced by the variable's value; a missing one is remembered. */
  resolve(text: string): string;
  resolve(text: string | undefined): string | undefined;
  resolve(text: string | undefined): string | undefined {
    if (text === undefined) return undefined;
    for (const name of secretNames(text)) {
      const v = this.env[name];
      if (v === undefined || v === '') this.missing.add(name);
      else this.values.add(v);
    }
    return text.replace(/\$\{env:([^}]*)\}/g, (_m, name: string) => this.env[name] ?? '');
  }

  /**
   * The text with every secret value (as it is, and as it appears percent-encoded in a URL) replaced by
   * "[secret]", and every URL's userinfo removed. Call it on the whole text, before cutting it to length.
   */
  redact(text: string): string {
    let out = text;
    for (const v of this.values) {
      if (v.length < 4) continue;
      out = out.split(v).join('[secret]');
      const encoded = encodeURIComponent(v);
      if (encoded !== v) out = out.split(encoded).join('[secret]');
    }
    return stripUserinfo(out);
  }
}
