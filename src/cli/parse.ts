// The command line → one command to run, or the help/usage text to print. node:util parseArgs, strict:
// an unknown flag, a missing value or a stray argument is a usage error (exit 2), never a guess.
import { parseArgs } from 'node:util';
import {
  COMMANDS,
  GLOBAL_OPTIONS,
  GROUPS,
  USAGE,
  commandUsage,
  type CommandSpec,
  type GlobalFlags,
} from './commands.ts';

export type Parsed =
  | { kind: 'help'; text: string }
  | { kind: 'usage-error'; text: string }
  | {
      kind: 'run';
      spec: CommandSpec;
      flags: Map<string, string>;
      positionals: string[];
      global: GlobalFlags;
    };

const GLOBAL_FLAGS = new Set(Object.keys(GLOBAL_OPTIONS).map((k) => `--${k}`));

const HELP = new Set(['--help', '-h']);
const byName = new Map(COMMANDS.map((c) => [c.name, c]));

function groupUsage(group: string): string {
  const cmds = COMMANDS.filter((c) => c.name.startsWith(group + ' '));
  return (
    `usage: rendergate ${group} <${cmds.map((c) => c.name.split(' ')[1]).join('|')}> [flags]\n\n` +
    cmds.map((c) => `  rendergate ${c.name} ${c.args}\n      ${c.summary}`).join('\n') +
    '\n'
  );
}

const error = (message: string, usage = USAGE): Parsed => ({
  kind: 'usage-error',
  text: `rendergate: ${message}\n\n${usage}`,
});

/** The command named by `words` (one word, or a group and its word), or what to print instead. */
function findCommand(words: string[]): CommandSpec | Parsed {
  const [first, second] = words;
  if (!GROUPS.has(first)) return byName.get(first) ?? error(`unknown command "${first}"`);
  if (second === undefined) return error(`"${first}" needs a command word`, groupUsage(first));
  if (HELP.has(second)) return { kind: 'help', text: groupUsage(first) };
  return (
    byName.get(`${first} ${second}`) ??
    error(`unknown command "${first} ${second}"`, groupUsage(first))
  );
}

/** `env.RENDERGATE_ROLE` names the command when there is none (a container's default). */
export function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv = process.env): Parsed {
  // Global flags may come before the command as well as after it.
  const global: GlobalFlags = { insecure: false };
  while (argv.length > 0 && GLOBAL_FLAGS.has(argv[0])) {
    global[argv[0].slice(2) as keyof GlobalFlags] = true;
    argv = argv.slice(1);
  }
  if (argv.length === 0) {
    const role = env.RENDERGATE_ROLE || 'serve';
    if (!['serve', 'api', 'worker'].includes(role)) {
      return error(`RENDERGATE_ROLE=${JSON.stringify(role)}: must be serve, api or worker`);
    }
    return { kind: 'run', spec: byName.get(role)!, flags: new Map(), positionals: [], global };
  }
  if (HELP.has(argv[0])) return { kind: 'help', text: USAGE };
  if (argv[0] === '--version' || argv[0] === '-v') argv = ['version', ...argv.slice(1)];
  if (argv[0].startsWith('-')) return error(`unknown flag "${argv[0]}" (flags follow the command)`);
  const found = findCommand(argv);
  if ('kind' in found) return found;
  const spec = found;
  const rest = argv.slice(spec.name.split(' ').length);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: { ...spec.options, ...GLOBAL_OPTIONS, help: { type: 'boolean', short: 'h' } },
    });
  } catch (e) {
    return error((e as Error).message, commandUsage(spec));
  }
  if (parsed.values.help) return { kind: 'help', text: commandUsage(spec) };
  if (spec.name === 'help') {
    if (parsed.positionals.length === 0) return { kind: 'help', text: USAGE };
    const named = findCommand(parsed.positionals);
    return 'kind' in named ? named : { kind: 'help', text: commandUsage(named) };
  }
  if (parsed.positionals.length !== spec.positionals) {
    const extra = parsed.positionals.length > spec.positionals;
    return error(
      extra ? `unexpected argument "${parsed.positionals[spec.positionals]}"` : 'missing argument',
      commandUsage(spec),
    );
  }
  const flags = new Map<string, string>();
  for (const [k, v] of Object.entries(parsed.values)) {
    if (typeof v === 'string') flags.set(k, v);
    // a command's own switch (`--revoke-keys`) as "true"; the global ones are read apart
    else if (v === true && k !== 'help' && k !== 'insecure') flags.set(k, 'true');
  }
  if (parsed.values.insecure === true) global.insecure = true;
  return { kind: 'run', spec, flags, positionals: parsed.positionals, global };
}
