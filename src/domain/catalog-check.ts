// The small checks every part of a catalog's validation shares: a problem is reported as a line of text.
export type Raw = Record<string, unknown>;
export type Report = (message: string) => void;

export const isObject = (v: unknown): v is Raw =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const isPositiveInt = (v: unknown): v is number =>
  Number.isSafeInteger(v) && (v as number) > 0;
export const isText = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

export function unknownKeys(raw: Raw, allowed: string[], bad: Report, what = 'key'): void {
  for (const k of Object.keys(raw)) if (!allowed.includes(k)) bad(`unknown ${what} "${k}"`);
}
