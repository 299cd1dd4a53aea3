// The failure codes are one closed list (src/domain/render-failures.ts): the reference documents each
// of them, and the studio words each of them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RENDER_FAILURES, isRenderFailureCode } from '../../../src/domain/render-failures.ts';
import { plainError } from '../../../src/studio/presenters.ts';

const codes = Object.keys(RENDER_FAILURES);

describe('failure codes', () => {
  it('docs/api.md lists exactly the closed list', () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/api.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Failure codes'), doc.indexOf('## Waiting'));
    const listed = [...section.matchAll(/^\| `([A-Z_]+)` +\|/gm)].map((m) => m[1]);
    expect(listed).toEqual(codes);
  });

  it('the studio words every code, and an unknown one still reads as a failure', () => {
    for (const code of codes) {
      const said = plainError({ error: { code, message: 'Why.' }, refundedCents: 30 });
      expect(said).toBe(
        `${RENDER_FAILURES[code as keyof typeof RENDER_FAILURES]}: Why. Its cost, €0.30, was refunded.`,
      );
    }
    expect(plainError({ error: { code: 'toString', message: 'x' }, refundedCents: 0 })).toBe(
      'The render failed: x.',
    );
    expect(isRenderFailureCode('hasOwnProperty')).toBe(false);
  });
});
