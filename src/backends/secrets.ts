// `${env:NAME}` in a catalog's backend (docs/backends.md): read from the
// environment once, at start. A missing variable stops the start naming it (never its value). The
// values read are kept so that an error message a model server sends back can be scrubbed of them
// before it reaches a log, a generation's error or the API.
import { secretNames } from '../domain/catalog-backend.ts';

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

  /** The text with every secret value replaced by "[secret]". */
  redact(text: string): string {
    let out = text;
    for (const v of this.values) if (v.length >= 4) out = out.split(v).join('[secret]');
    return out;
  }
}
