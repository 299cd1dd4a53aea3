// The operator's commands for running an installation: migrations, backup and restore. main.ts
// dispatches to them by name.
import { backup } from './backup.ts';
import { migrateCommand } from './migrate.ts';
import { restore } from './restore.ts';

type Command = (args: string[], flags: Map<string, string>) => Promise<void>;

export const OPS_COMMANDS = new Map<string, Command>([
  ['migrate', migrateCommand],
  ['backup', backup],
  ['restore', restore],
]);
