// The text of chat renders across processes, without a database: what a stream sends of the pieces it
// hears (src/queue/streamed-text.ts), what the relay sends in notifications (src/queue/live-text-relay.ts)
// and when a piece is relayed at all (src/queue/live-text.ts). The whole path through PostgreSQL is in
// test/integration/openai/split-stream.test.ts.
import { describe, expect, it } from 'vitest';
import { LiveText, type Piece } from '../../../src/queue/live-text.ts';
import {
  LiveTextRelay,
  PAYLOAD_MAX_BYTES,
  piecePayloads,
} from '../../../src/queue/live-text-relay.ts';
import { StreamedText } from '../../../src/queue/streamed-text.ts';

function reader() {
  const sent: string[] = [];
  const s = new StreamedText((p) => sent.push(p));
  const piece = (attempt: string, offset: number, text: string) =>
    s.piece({ attempt, offset, text });
  return { s, sent, piece, content: () => sent.join('') };
}

describe('StreamedText', () => {
  it('sends pieces as they continue the text, and the rest of the final text at the end', () => {
    const r = reader();
    r.piece('g-1', 0, 'Shot 1: ');
    r.piece('g-1', 8, 'a wide ');
    r.piece('g-1', 8, 'a wide '); // heard twice (here and relayed): once only
    expect(r.sent).toEqual(['Shot 1: ', 'a wide ']);
    expect(r.s.rest('Shot 1: a wide view.')).toBe('view.');
  });

  it('a gap (pieces published before it listened, or lost) stops following that attempt', () => {
    const r = reader();
    r.piece('g-1', 8, 'a wide ');
    r.piece('g-1', 15, 'view.');
    expect(r.sent).toEqual([]);
    expect(r.s.rest('Shot 1: a wide view.')).toBe('Shot 1: a wide view.');
    const q = reader();
    q.piece('g-1', 0, 'Shot 1: ');
    q.piece('g-1', 15, 'view.'); // 'a wide ' lost
    q.piece('g-1', 20, ' Shot 2.');
    expect(q.content()).toBe('Shot 1: ');
    expect(q.content() + q.s.rest('Shot 1: a wide view. Shot 2.')).toBe(
      'Shot 1: a wide view. Shot 2.',
    );
  });

  it('a new attempt is followed silently while it repeats what was sent, then sent on', () => {
    const r = reader();
    r.piece('g-1', 0, 'Shot 1: ');
    r.piece('g-1', 8, 'a wi');
    r.piece('g-2', 0, 'Shot 1: a');
    r.piece('g-2', 9, ' wide view.');
    r.piece('g-1', 12, 'de'); // a late piece of the older attempt
    expect(r.content()).toBe('Shot 1: a wide view.');
    expect(r.s.rest('Shot 1: a wide view.')).toBe('');
  });

  it('a retry that writes another text is not sent on, and the end says so (null)', () => {
    const r = reader();
    r.piece('g-1', 0, 'Shot 1: ');
    r.piece('g-2', 0, 'Scene one');
    expect(r.content()).toBe('Shot 1: ');
    expect(r.s.rest('Scene one')).toBeNull();
  });

  it('an older attempt heard after a newer one is ignored', () => {
    const r = reader();
    r.piece('g-2', 0, 'New ');
    r.piece('g-1', 0, 'Old text');
    r.piece('g-2', 4, 'text');
    expect(r.content()).toBe('New text');
  });
});

describe('piecePayloads', () => {
  it('one payload when it fits, else parts under the limit at character boundaries, in order', () => {
    expect(piecePayloads('g', { attempt: 'g-1', offset: 3, text: 'abc' })).toEqual([
      'text:g ["g-1",3,"abc"]',
    ]);
    const text = 'é'.repeat(5000) + '🦊'.repeat(3000) + '"\\\n\u0000' + 'x'.repeat(9000);
    const payloads = piecePayloads('gen-1', { attempt: 'gen-1-2', offset: 10, text });
    expect(payloads.length).toBeGreaterThanOrEqual(4);
    let offset = 10;
    let joined = '';
    for (const p of payloads) {
      expect(Buffer.byteLength(p)).toBeLessThanOrEqual(PAYLOAD_MAX_BYTES);
      expect(p.startsWith('text:gen-1 ')).toBe(true);
      const [attempt, at, part] = JSON.parse(p.slice('text:gen-1 '.length)) as [
        string,
        number,
        string,
      ];
      expect([attempt, at]).toEqual(['gen-1-2', offset]);
      expect(part.length).toBeGreaterThan(0);
      // No surrogate pair cut in two: neither end is half of one.
      expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(part)).toBe(false);
      offset += part.length;
      joined += part;
    }
    expect(joined).toBe(text);
  });
});

describe('LiveText with a relay', () => {
  function setup() {
    const relayed: { id: string; p: Piece }[] = [];
    const live = new LiveText();
    live.relayTo({ send: (id, p) => relayed.push({ id, p }) });
    return { live, relayed };
  }

  it("relays a chat render's pieces only when no answer of this process follows it", () => {
    const { live, relayed } = setup();
    live.publish('a', 'a-1', 'one ', true);
    live.publish('b', 'b-1', 'not a chat request ', false);
    const got: Piece[] = [];
    const stop = live.subscribe('a', { piece: (p) => got.push(p) });
    live.publish('a', 'a-1', 'two', true);
    stop();
    live.publish('a', 'a-1', ' three', true);
    expect(relayed).toEqual([
      { id: 'a', p: { attempt: 'a-1', offset: 0, text: 'one ' } },
      { id: 'a', p: { attempt: 'a-1', offset: 7, text: ' three' } },
    ]);
    expect(got).toEqual([
      { attempt: 'a-1', offset: 0, text: 'one ' },
      { attempt: 'a-1', offset: 4, text: 'two' },
    ]);
  });

  it('delivers relayed pieces to the answers of another process that follow their generation', () => {
    const { live } = setup();
    const got: Piece[] = [];
    live.subscribe('a', { piece: (p) => got.push(p) });
    for (const payload of piecePayloads('a', { attempt: 'a-1', offset: 0, text: 'x'.repeat(9000) }))
      expect(live.receive(payload)).toBe(true);
    expect(live.receive('text:b ["b-1",0,"other"]')).toBe(true);
    expect(live.receive('text:a not json')).toBe(true);
    expect(live.receive('0b6f8d2e-generation-id')).toBe(false); // a change notification
    expect(got.map((p) => p.text).join('')).toBe('x'.repeat(9000));
  });
});

describe('LiveTextRelay', () => {
  it('collects the pieces of a window into as few notifications as their size allows', async () => {
    const sent: string[] = [];
    const relay = new LiveTextRelay({ notifier: { send: (p) => sent.push(p) } });
    relay.send('a', { attempt: 'a-1', offset: 0, text: 'one ' });
    relay.send('b', { attempt: 'b-1', offset: 0, text: 'other' });
    relay.send('a', { attempt: 'a-1', offset: 4, text: 'two' });
    relay.send('a', { attempt: 'a-2', offset: 0, text: 'again' });
    expect(sent).toEqual([]);
    relay.flush();
    expect(sent).toEqual([
      'text:a ["a-1",0,"one two"]',
      'text:a ["a-2",0,"again"]',
      'text:b ["b-1",0,"other"]',
    ]);
  });
});
