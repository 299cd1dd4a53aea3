// The upload quota's memory of refusals (src/admission/upload-quota.ts): what it refuses without
// the database, for how long, and what makes it forget.
import { expect, it } from 'vitest';
import { OVER_QUOTA_MEMORY_MS, UploadQuota } from '../../../src/admission/upload-quota.ts';
import { RefusedUntil } from '../../../src/admission/refused-until.ts';

it('refuses from a remembered usage only what would not fit it, only for its moment', () => {
  const q = new UploadQuota({ bytes: 1000, count: 3 });
  const t = 1_000_000;
  expect(q.early('acc_a', 10, t)).toBeNull(); // nothing remembered: the database decides
  // refused by bytes (900 of 1000 held): a 100-byte upload still fits, a larger one does not
  const e = q.refuse('acc_a', { usedBytes: 900, count: 1 }, t);
  expect(e.code).toBe('UPLOAD_QUOTA_EXCEEDED');
  expect(e.details).toEqual([{ usedBytes: 900, quotaBytes: 1000, count: 1, quotaCount: 3 }]);
  expect(q.early('acc_a', 100, t + 1)).toBeNull();
  expect(q.early('acc_a', 101, t + 1)?.details).toEqual(e.details);
  // a size not known yet is refused only when not one byte fits
  expect(q.early('acc_a', null, t + 1)).toBeNull();
  q.refuse('acc_a', { usedBytes: 1000, count: 1 }, t);
  expect(q.early('acc_a', null, t + 1)?.code).toBe('UPLOAD_QUOTA_EXCEEDED');
  // another account is not refused by it
  expect(q.early('acc_b', 5000, t + 1)).toBeNull();
  // the moment passes: the database is asked again
  expect(q.early('acc_a', 101, t + OVER_QUOTA_MEMORY_MS - 1)).not.toBeNull();
  expect(q.early('acc_a', 101, t + OVER_QUOTA_MEMORY_MS)).toBeNull();
  // refused by count: any upload, whatever its size
  q.refuse('acc_a', { usedBytes: 10, count: 3 }, t);
  expect(q.early('acc_a', 1, t + 1)).not.toBeNull();
  // a delete through this process forgets it at once
  q.forget('acc_a');
  expect(q.early('acc_a', 1, t + 1)).toBeNull();
});

it('keeps at most `max` refusals, the expired going first, then the oldest', () => {
  const r = new RefusedUntil<number>(2);
  r.set('a', 100, 0, 1);
  r.set('b', 50, 0, 2);
  expect(r.get('a', 10)).toBe(1);
  r.set('c', 200, 60, 3); // b has expired by 60: it goes, a stays
  expect([r.get('a', 60), r.get('b', 60), r.get('c', 60)]).toEqual([1, undefined, 3]);
  r.set('d', 300, 60, 4); // none expired: the oldest (a) goes
  expect([r.get('a', 60), r.get('c', 60), r.get('d', 60)]).toEqual([undefined, 3, 4]);
  expect(r.size).toBe(2);
  expect(r.left('d', 100)).toBe(200);
  expect(r.get('d', 300)).toBeUndefined();
  expect(r.size).toBe(1);
});
