// Opaque ids with a type prefix, sortable by creation time (UUIDv7 body, hex without dashes).
import { v7 } from 'uuid';

export type IdPrefix =
  | 'acct'
  | 'key'
  | 'gen'
  | 'led'
  | 'upl'
  | 'whe'
  | 'msg'
  | 'evt'
  | 'sev'
  | 'chk'
  | 'aud'
  | 'usr'
  | 'arc';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${v7().replace(/-/g, '')}`;
}

const ID_RE = /^(acct|key|gen|led|upl|whe|msg|evt|sev|chk|aud|usr|arc)_[0-9a-f]{32}$/;

/** True when `s` has the shape of an id of that type; anything else cannot exist, so callers answer 404. */
export function isId(prefix: IdPrefix, s: string): boolean {
  return ID_RE.test(s) && s.startsWith(prefix + '_');
}
