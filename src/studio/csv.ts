// CSV the studio's exports write (RFC 4180: every text cell quoted, quotes doubled, CRLF lines).
// A spreadsheet opening it must never run a cell as a formula (OWASP "CSV Injection"): text that
// starts with = + - @ (or a tab or carriage return) is prefixed with a single quote.

/**
 * A CSV cell. A number is written bare, so a spreadsheet reads it as a number (it cannot be a
 * formula); text is quoted, and a leading = + - @ neutralised.
 */
export const cell = (v: unknown) => {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'string' && /^-?\d+\.\d{2}$/.test(v)) return v; // euros, from toFixed(2)
  let s =
    v === undefined || v === null
      ? ''
      : typeof v === 'string'
        ? v
        : v instanceof Date ||
            typeof v === 'number' ||
            typeof v === 'boolean' ||
            typeof v === 'bigint'
          ? v.toString()
          : (JSON.stringify(v) ?? '');
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return `"${s.replace(/"/g, '""')}"`;
};

/** One CSV line of `cells`, CRLF-terminated. */
export const csvLine = (cells: readonly unknown[]) => cells.map(cell).join(',') + '\r\n';
