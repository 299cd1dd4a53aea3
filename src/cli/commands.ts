// Every command of the `rendergate` command line: its words, its flags (for node:util parseArgs) and
// its usage line. The parser, `--help`, the completion script and docs all read this one table.
import type { ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface CommandSpec {
  /** The command's words, e.g. `accounts list`. */
  name: string;
  /** What follows the words in the usage line. */
  args: string;
  summary: string;
  options: Options;
  /** How many positional arguments it takes after its words. */
  positionals: number;
  /** Runs against a remote server's admin API when RENDERGATE_URL is set. */
  remote?: boolean;
}

const s = { type: 'string' } as const;

/**
 * Flags every command takes, before or after its words. `--insecure`: the operator commands may
 * send the admin token to RENDERGATE_URL over plain http:// to another machine (remote-url.ts).
 */
export const GLOBAL_OPTIONS = { insecure: { type: 'boolean' } } as const satisfies Options;

export interface GlobalFlags {
  insecure: boolean;
}

const GLOBAL_HELP = `Global flags (before or after the command):
  --insecure    with RENDERGATE_URL, allow plain http:// to a host other than this machine
                (the admin token then crosses the network unencrypted); https:// needs none
`;

const cmd = (
  name: string,
  args: string,
  summary: string,
  more: Partial<CommandSpec> = {},
): CommandSpec => ({ name, args, summary, options: {}, positionals: 0, ...more });
const R = { remote: true };

export const COMMANDS: CommandSpec[] = [
  cmd('serve', '', 'run the API and the workers in one process (the default)'),
  cmd('api', '', 'run the API only'),
  cmd('worker', '', 'run the workers only'),
  cmd('accounts list', '[--limit N] [--cursor C]', 'accounts, newest first', {
    ...R,
    options: { limit: s, cursor: s },
  }),
  cmd('accounts find', 'TEXT', 'accounts whose email contains TEXT, or whose id is TEXT', {
    ...R,
    options: { limit: s },
    positionals: 1,
  }),
  cmd('accounts create', '--email E [--name N]', 'create an account', {
    ...R,
    options: { email: s, name: s },
  }),
  cmd(
    'accounts invite',
    '--email E [--name N]',
    'print a one-time link to set a password (creates the account)',
    { ...R, options: { email: s, name: s } },
  ),
  cmd('accounts reset-link', '--email E', 'print a one-time password reset link (valid 1 hour)', {
    ...R,
    options: { email: s },
  }),
  cmd('credits add', '--account ID|EMAIL --amount CENTS [--reason R]', 'add credit to an account', {
    ...R,
    options: { account: s, amount: s, reason: s },
  }),
  cmd(
    'keys create',
    '--account ID|EMAIL [--name N] [--mode live|test] [--daily-cap CENTS|none] ' +
      '[--rate-limit PER_MINUTE]',
    'create an API key (printed once)',
    { ...R, options: { account: s, name: s, mode: s, 'daily-cap': s, 'rate-limit': s } },
  ),
  cmd('keys revoke', '--key ID', 'revoke an API key', { ...R, options: { key: s } }),
  cmd('generations refund', '--id ID', 'refund a generation', { ...R, options: { id: s } }),
  cmd(
    'audit verify',
    '--account ID|EMAIL',
    "check the account's audit chain: prints the events checked, exit 1 at a broken one",
    { options: { account: s } },
  ),
  cmd('members list', '--account ID|EMAIL', "an account's members and their roles", {
    ...R,
    options: { account: s },
  }),
  cmd(
    'members add',
    '--account ID|EMAIL --email E --role ROLE',
    'add a person at once, or invite a new one (roles: owner admin developer billing viewer)',
    { ...R, options: { account: s, email: s, role: s } },
  ),
  cmd('members role', '--account ID|EMAIL --user ID|EMAIL --role ROLE', "change a member's role", {
    ...R,
    options: { account: s, user: s, role: s },
  }),
  cmd(
    'members remove',
    '--account ID|EMAIL --user ID|EMAIL [--revoke-keys]',
    'remove a member (their sessions end; --revoke-keys revokes the keys they made)',
    { ...R, options: { account: s, user: s, 'revoke-keys': { type: 'boolean' } } },
  ),
  cmd('catalog check', 'FILE', 'validate a catalog file', { positionals: 1 }),
  cmd(
    'catalog import',
    'cog URL [--id vendor/name]',
    'draft a catalog entry from a Cog container',
    { options: { id: s }, positionals: 2 },
  ),
  cmd('migrate', '', 'apply pending migrations and exit'),
  cmd('backup', '--out FILE', 'a consistent archive of the database and stored files', {
    options: { out: s },
  }),
  cmd('restore', 'FILE [--data-dir DIR]', 'rebuild a stopped, empty installation from a backup', {
    options: { 'data-dir': s },
    positionals: 1,
  }),
  cmd('completion', 'bash|zsh', 'print a shell completion script', { positionals: 1 }),
  cmd('version', '', 'print the version'),
  cmd('help', '[COMMAND]', "print this help, or a command's", { positionals: 2 }),
];

const line = (c: CommandSpec) => {
  const head = `  ${c.name}${c.args ? ' ' + c.args : ''}`;
  return head.length < 46
    ? `${head.padEnd(46)} ${c.summary}`
    : `${head}\n${' '.repeat(47)}${c.summary}`;
};

export const USAGE = `usage: rendergate <command> [flags]      (no command: RENDERGATE_ROLE, else serve)

${COMMANDS.map(line).join('\n')}

Every command takes --help. Accounts are named by id or email wherever --account is taken.
With RENDERGATE_URL and RENDERGATE_ADMIN_TOKEN set, the accounts, credits, keys, generations and
members commands use that server's admin API instead of the local data dir or DATABASE_URL.

${GLOBAL_HELP}`;

export function commandUsage(c: CommandSpec): string {
  const remote = c.remote
    ? '\nWith RENDERGATE_URL and RENDERGATE_ADMIN_TOKEN set, runs against that server ' +
      '(https://, or\nhttp:// to this machine; --insecure allows http:// to another).\n'
    : '';
  return `usage: rendergate ${c.name}${c.args ? ' ' + c.args : ''}\n\n  ${c.summary}\n${remote}`;
}

/** The groups whose commands take a second word (`accounts list`). */
export const GROUPS = new Set(
  COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]),
);
