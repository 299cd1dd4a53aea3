// The operator's commands for running an installation: version, migrations, backup and restore.
// main.ts dispatches to them by name.
import { VERSION } from '../domain/version.ts';
import { backup } from './backup.ts';
import { migrateCommand } from './migrate.ts';
import { restore } from './restore.ts';

type Command = (args: string[], flags: Map<string, string>) => Promise<void>;

export const OPS_USAGE = `  migrate                                      apply pending migrations and exit
  backup --out FILE                            a consistent archive of the database and stored files
  restore FILE [--data-dir DIR]                rebuild a stopped, empty installation from a backup
  version | --version`;

export const OPS_COMMANDS = new Map<string, Command>([
  ['version', async () => { process.stdout.write(`rendergate ${VERSION}\n`); }],
  ['migrate', migrateCommand],
  ['backup', backup],
  ['restore', restore],
]);
