// The operator's commands for running an installation: migrations, backup and restore, and the
// audit chain's check. main.ts dispatches to them by name.
import { auditVerify } from './audit.ts';
import { backup } from './backup.ts';
import { migrateCommand } from './migrate.ts';
import { restore } from './restore.ts';

type Command = (args: string[], flags: Map<string, string>) => Promise<void>;

export const OPS_COMMANDS = new Map<string, Command>([
  ['migrate', migrateCommand],
  ['backup', backup],
  ['restore', restore],
  ['audit verify', auditVerify],
]);
