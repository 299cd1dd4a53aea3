// `${env:NAME}` in a catalog's backend (docs/backends.md): read from the
// environment once, at start. A missing variable stops the start naming it (never its value). The
// values read are kept so that everything a model server sends back, its answers as well as its
// errors, is scrubbed of them before it reaches a log, a generation or the API (redacting.ts).
import { stripUserinfo } from '../domain/scrub.ts';
import { SecretText, type SecretStream } from '../domain/secret-text.ts';

const SECRET = /\$\{env:([^}]*)\}/g;

/** Every `${env:NAME}` a value refers to. */
export function secretNames(value: string): string[] {
  return [...value.matchAll(SECRET)].map((m) => m[1]);
}

export class Secrets {
  private values = new Set<string>();
  private text: SecretText | null = null;
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
      else if (!this.values.has(v)) {
        this.values.add(v);
        this.text = null;
      }
    }
    return text.replace(/\$\{env:([^}]*)\}/g, (_m, name: string) => this.env[name] ?? '');
  }

  private secretText(): SecretText {
    return (this.text ??= new SecretText(this.values));
  }

  /**
   * The text with every secret value (as it is, percent-encoded as in a URL, or escaped as in JSON)
   * replaced by "[secret]", and every URL's userinfo removed: for errors and addresses. Call it on
   * the whole text, before cutting it to length.
   */
  redact(text: string): string {
    return stripUserinfo(this.secretText().redact(text));
  }

  /**
   * A model's answer with every secret value replaced by "[secret]"; nothing else in it changes (a
   * URL in an answer keeps its userinfo: it is the model's text, not an address of ours).
   */
  redactAnswer(text: string): string {
    return this.secretText().redact(text);
  }

  /** The same for an answer that arrives in pieces: the redacted pieces go to `emit`. */
  answerStream(emit: (piece: string) => void): SecretStream {
    return this.secretText().stream(emit);
  }
}
