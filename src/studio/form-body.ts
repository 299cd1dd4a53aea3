// Reading urlencoded form bodies: each value is a string, or an array when the name repeats (a toggle's
// hidden "false" followed by its checked box's "true": the last one wins).
export type FormBody = Record<string, string | string[] | undefined>;

export function field(body: unknown, name: string): string | undefined {
  const v = body && typeof body === 'object' ? (body as FormBody)[name] : undefined;
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/** A safe place to go back to after signing in: a path of this site, never another host. */
export function localPath(next: string | undefined): string {
  return next && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) && next.length < 500 ? next : '/';
}

/** Every value of a repeated name (checkboxes), in order; empty when absent. */
export function fields(body: unknown, name: string): string[] {
  const v = body && typeof body === 'object' ? (body as FormBody)[name] : undefined;
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
