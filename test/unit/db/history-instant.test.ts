// History's instants: PostgreSQL's JSON text of a timestamptz written as Date.prototype.toISOString()
// writes it, by cutting the text in UTC, through Date otherwise: always what new Date() gives.
import { describe, expect, it } from 'vitest';
import { isoInstant } from '../../../src/db/generations-history.ts';

describe('isoInstant', () => {
  it('equals new Date(text).toISOString() for every form PostgreSQL writes', () => {
    for (const text of [
      '2026-11-24T04:31:33.649222+00:00',
      '2026-11-24T04:31:33.649999+00:00', // digits past the millisecond are dropped, not rounded
      '2026-11-24T04:31:33.999999+00:00',
      '2026-11-24T04:31:33+00:00', // a whole second: no fraction
      '2026-11-24T04:31:33.5+00:00',
      '2026-11-24T04:31:33.05+00:00',
      '2026-11-24T04:31:33.123+00:00',
      '2026-11-24T04:31:33.12345+00:00',
      '2026-11-24T01:01:33.649222-03:30', // a session in another time zone
      '2026-11-24T06:31:33.649222+02:00',
      '2026-11-24T06:31:33+05:45',
    ])
      expect(isoInstant(text), text).toBe(new Date(text).toISOString());
  });

  it('cuts UTC text as Date would, for instants all through a day', () => {
    // PostgreSQL's form: microseconds with trailing zeros dropped, no fraction on a whole second.
    const pgText = (iso: string, micros: number) => {
      const f = String(micros).padStart(6, '0').replace(/0+$/, '');
      return `${iso.slice(0, 19)}${f ? '.' + f : ''}+00:00`;
    };
    const start = Date.UTC(2026, 0, 1);
    for (let t = start; t < start + 86_400_000; t += 9973) {
      const iso = new Date(t).toISOString();
      for (const below of [0, 1, 999]) {
        const text = pgText(iso, (t % 1000) * 1000 + below);
        expect(isoInstant(text), text).toBe(iso);
      }
    }
  });
});
