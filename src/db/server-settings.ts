// SQL of server_settings (migrations/017): facts a running server records for its operator's tools,
// such as the public URL links are made with.
import type { Queryable } from './pool.ts';

export async function writeSetting(db: Queryable, name: string, value: string): Promise<void> {
  await db.query(
    `INSERT INTO server_settings (name, value) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
     WHERE server_settings.value IS DISTINCT FROM EXCLUDED.value`,
    [name, value],
  );
}

export async function readSetting(db: Queryable, name: string): Promise<string | null> {
  const { rows } = await db.query<{ value: string }>(
    'SELECT value FROM server_settings WHERE name = $1',
    [name],
  );
  return rows[0]?.value ?? null;
}
