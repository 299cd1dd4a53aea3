// What a running server tells the operator's tools: its public URL, recorded in the database at start
// so that `rendergate accounts invite` run anywhere against that database prints the server's links.
import type { Queryable } from '../db/pool.ts';
import { readSetting, writeSetting } from '../db/server-settings.ts';

const PUBLIC_URL = 'public_url';

export async function recordPublicUrl(db: Queryable, url: string): Promise<void> {
  await writeSetting(db, PUBLIC_URL, url);
}

/** The public URL the last API process to start recorded, or null when none has started yet. */
export async function recordedPublicUrl(db: Queryable): Promise<string | null> {
  return readSetting(db, PUBLIC_URL);
}
