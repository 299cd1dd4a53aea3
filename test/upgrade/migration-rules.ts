// The static half of the rolling-upgrade rule (docs/upgrades.md): statements a migration must not make
// while the previous release may still be running against the same database. Each pattern names what
// the previous release would stumble on. A statement that contracts the schema on purpose (a column
// the previous release provably no longer reads: rolling.test.ts prepares every statement it sends)
// carries the comment `-- contract: <why>` on one of its lines.
export const BREAKING: { pattern: RegExp; why: string }[] = [
  { pattern: /\bDROP\s+COLUMN\b/i, why: 'the previous release still reads or writes the column' },
  {
    pattern: /\bDROP\s+(TABLE|VIEW|FUNCTION|TYPE|SEQUENCE)\b/i,
    why: 'the previous release still uses it',
  },
  {
    pattern: /\bRENAME\b/i,
    why: 'the previous release still uses the old name (add the new one, copy, drop later)',
  },
  {
    pattern: /\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i,
    why: 'the previous release reads and writes the old type',
  },
  { pattern: /\bSET\s+NOT\s+NULL\b/i, why: "the previous release's inserts leave the column out" },
  {
    pattern:
      /\bADD\s+(COLUMN\s+)?(IF\s+NOT\s+EXISTS\s+)?\S+\s+[^,;]*\bNOT\s+NULL\b(?![^,;]*\bDEFAULT\b)/i,
    why: "a NOT NULL column without a DEFAULT fails the previous release's inserts",
  },
];

/** SQL statements of a migration file, with comments kept (markers live in them). */
function statements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** What in `sql` would break the previous release, one line per finding. */
export function breakingChanges(file: string, sql: string): string[] {
  const found: string[] = [];
  for (const stmt of statements(sql)) {
    if (/--\s*contract:/i.test(stmt)) continue;
    const code = stmt.replace(/--[^\n]*/g, '');
    for (const { pattern, why } of BREAKING) {
      const m = pattern.exec(code);
      if (m) found.push(`${file}: "${m[0].replace(/\s+/g, ' ')}": ${why}`);
    }
  }
  return found;
}
