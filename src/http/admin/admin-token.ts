// The operator's admin token: RENDERGATE_ADMIN_TOKEN, or one generated on first start, saved in the
// data dir (mode 600) and printed once.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.ts';

export function resolveAdminToken(
  config: Config,
  announce: (token: string, file: string) => void,
): string {
  if (config.adminToken) return config.adminToken;
  const file = path.join(config.dataDir, 'admin-token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const token = `rgadm_${crypto.randomBytes(24).toString('base64url')}`;
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o755 });
  try {
    fs.writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim(); // another process won
    throw e;
  }
  announce(token, file);
  return token;
}
