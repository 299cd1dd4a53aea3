// Field checks for the admin bodies; each collects problems so one answer names every bad field.
import { invalidInput, type FieldProblem } from '../../domain/errors.ts';

// Unknown names are echoed back: at most the first 50, each cut at 200 characters, so a hostile body
// cannot bloat the answer.
const MAX_UNKNOWN_REPORTED = 50;
const MAX_NAME_ECHO = 200;
// Postgres would store a lone surrogate as U+FFFD: refuse it, as NUL, rather than keep other text than was sent.
const LONE_SURROGATE = /\p{Cs}/u;

export class Fields {
  readonly problems: FieldProblem[] = [];
  constructor(
    private body: Record<string, unknown>,
    private allowed: string[],
  ) {
    const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
    for (const k of unknown.slice(0, MAX_UNKNOWN_REPORTED)) {
      this.problems.push({
        field: k.length > MAX_NAME_ECHO ? `${k.slice(0, MAX_NAME_ECHO)}…` : k,
        message: 'unknown field',
      });
    }
  }

  string(
    name: string,
    opts: { required?: boolean; max: number; pattern?: RegExp },
  ): string | undefined {
    const v = this.body[name];
    if (v === undefined || (v === null && !opts.required)) {
      if (opts.required) this.problems.push({ field: name, message: 'is required' });
      return undefined;
    }
    if (
      typeof v !== 'string' ||
      v.length === 0 ||
      v.length > opts.max ||
      (opts.pattern && !opts.pattern.test(v))
    ) {
      this.problems.push({
        field: name,
        message: opts.pattern
          ? 'has the wrong form'
          : `must be a string of 1 to ${opts.max} characters`,
      });
      return undefined;
    }
    if (v.includes('\u0000') || LONE_SURROGATE.test(v)) {
      this.problems.push({
        field: name,
        message: 'must be valid Unicode text without NUL characters',
      });
      return undefined;
    }
    return v;
  }

  int(
    name: string,
    opts: { required?: boolean; min: number; max: number; nullable?: boolean },
  ): number | null | undefined {
    const v = this.body[name];
    if (v === undefined) {
      if (opts.required) this.problems.push({ field: name, message: 'is required' });
      return undefined;
    }
    if (v === null && opts.nullable) return null;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < opts.min || v > opts.max) {
      this.problems.push({
        field: name,
        message: `must be an integer from ${opts.min} to ${opts.max}`,
      });
      return undefined;
    }
    return v;
  }

  /** One of `values` exactly; absent (or null) → undefined. */
  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const v = this.body[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
      this.problems.push({
        field: name,
        message: `must be one of ${values.map((x) => `"${x}"`).join(', ')}`,
      });
      return undefined;
    }
    return v as T;
  }

  done(): void {
    if (this.problems.length > 0) throw invalidInput(this.problems);
  }
}

export const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;
export const MAX_CENTS = 1_000_000_000_000; // ten billion euros: far above any real top-up, far below 2^53
