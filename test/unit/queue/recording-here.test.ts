// The changes held while this process records a render's outcome (src/queue/recording-here.ts):
// held only while a statement is under way, passed on once when it did not make the render final
// (a cancel committed meanwhile: the waiters must still hear of it), left to onFinal when it did.
import { expect, it } from 'vitest';
import { RecordingHere } from '../../../src/queue/recording-here.ts';

it('holds a change heard during an outcome, and passes it on unless the outcome was final', () => {
  const woken: string[] = [];
  const r = new RecordingHere((id) => woken.push(id));
  expect(r.hold('gen_a')).toBe(false); // nothing under way: woken as ever, by the caller
  r.begin('gen_a');
  expect(r.hold('gen_a')).toBe(true);
  r.end('gen_a', true); // final: onFinal wakes them
  expect(woken).toEqual([]);
  r.begin('gen_a');
  expect(r.hold('gen_a')).toBe(true);
  r.end('gen_a', false); // not final (cancelled meanwhile, or a retry): passed on now
  expect(woken).toEqual(['gen_a']);
  expect(r.hold('gen_a')).toBe(false);
  // Nothing heard: nothing passed on.
  r.begin('gen_b');
  r.end('gen_b', false);
  expect(woken).toEqual(['gen_a']);
  // Two attempts of one render recording at once: held until both have answered.
  r.begin('gen_c');
  r.begin('gen_c');
  expect(r.hold('gen_c')).toBe(true);
  r.end('gen_c', false);
  expect(woken).toEqual(['gen_a']);
  expect(r.hold('gen_c')).toBe(true);
  r.end('gen_c', false);
  expect(woken).toEqual(['gen_a', 'gen_c']);
});
