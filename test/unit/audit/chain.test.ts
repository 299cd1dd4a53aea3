// The audit chain's hash (docs/api.md "Audit log"): SHA-256 of prevHash then the event's RFC 8785
// JSON without `hash`, and the check that finds a changed, removed or reordered event.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, isAuditAction } from '../../../src/audit/actions.ts';
import { checkChain, eventHash, GENESIS_HASH, type AuditEvent } from '../../../src/audit/chain.ts';
import type { AuditRow } from '../../../src/db/audit-events.ts';

const base: Omit<AuditEvent, 'hash'> = {
  id: 'aud_0190aaaa000070008000000000000001',
  at: '2026-11-28T01:00:00.000Z',
  action: 'key.created',
  actor: { type: 'member', id: 'acct_1', email: 'é@example.com' },
  target: { type: 'api_key', id: 'key_1' },
  ip: '203.0.113.9',
  userAgent: null,
  details: { name: 'ci', n: 1e21, z: 0.000001, a: [true, null] },
  prevHash: GENESIS_HASH,
};

function row(e: AuditEvent, seq: number): AuditRow {
  return {
    id: e.id,
    account_id: 'acct_1',
    seq,
    at: new Date(e.at),
    action: e.action,
    actor: e.actor,
    target: e.target,
    ip: e.ip,
    user_agent: e.userAgent,
    details: e.details,
    prev_hash: e.prevHash,
    hash: e.hash,
  };
}

describe('the audit chain', () => {
  it('hashes prevHash followed by the RFC 8785 JSON of the event without hash', () => {
    // RFC 8785 by hand: keys sorted by UTF-16 code units, numbers as ECMAScript prints them
    // (1e+21, 0.000001), non-ASCII left as is.
    const json =
      '{"action":"key.created","actor":{"email":"é@example.com","id":"acct_1","type":"member"},' +
      '"at":"2026-11-28T01:00:00.000Z","details":{"a":[true,null],"n":1e+21,"name":"ci",' +
      '"z":0.000001},"id":"aud_0190aaaa000070008000000000000001","ip":"203.0.113.9",' +
      `"prevHash":"${GENESIS_HASH}","target":{"id":"key_1","type":"api_key"},"userAgent":null}`;
    const want = crypto
      .createHash('sha256')
      .update(GENESIS_HASH + json)
      .digest('hex');
    expect(eventHash(base)).toBe(want);
    expect(eventHash({ ...base, hash: 'ignored' })).toBe(want);
  });

  it('finds a changed event, a removed one and two swapped', () => {
    const events: AuditEvent[] = [];
    let prev = GENESIS_HASH;
    for (let i = 0; i < 4; i++) {
      const e = { ...base, id: base.id.slice(0, -1) + i, details: { i }, prevHash: prev };
      events.push({ ...e, hash: eventHash(e) });
      prev = events.at(-1)!.hash;
    }
    const rows = events.map((e, i) => row(e, i + 1));
    expect(checkChain(rows, GENESIS_HASH)).toBeNull();

    const changed = rows.map((r) => (r.seq === 2 ? { ...r, details: { i: 9 } } : r));
    expect(checkChain(changed, GENESIS_HASH)).toMatchObject({ seq: 2, problem: 'hash' });

    const removed = rows.filter((r) => r.seq !== 2);
    expect(checkChain(removed, GENESIS_HASH)).toMatchObject({ seq: 3, problem: 'link' });

    const swapped = [rows[0], rows[2], rows[1], rows[3]];
    expect(checkChain(swapped, GENESIS_HASH)).toMatchObject({ seq: 3, problem: 'link' });
  });

  it("knows exactly the contract's actions and the two alerts", () => {
    expect(AUDIT_ACTIONS).toHaveLength(24);
    expect(isAuditAction('key.created')).toBe(true);
    expect(isAuditAction('key.made')).toBe(false);
  });
});
