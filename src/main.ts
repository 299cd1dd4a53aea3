// CLI entry: serve | api | worker, and the operator commands, each printing JSON.
import pino from 'pino';
import { loadConfig, ConfigError, type Role } from './config.ts';
import { openInfra, startService } from './app.ts';
import { parseFlags } from './cli/args.ts';
import { ApiError } from './domain/errors.ts';
import { addCredit, createAccount } from './services/accounts.ts';
import { createKey, revokeKey } from './services/keys.ts';
import { Generations } from './services/generations.ts';
import { Ledger } from './services/ledger.ts';
import { CatalogError } from './domain/catalog-load.ts';
import { createProcessLog, exitOnFatal } from './cli/logger.ts';
import { OPS_COMMANDS, OPS_USAGE } from './cli/ops-commands.ts';
import { CliError } from './cli/cli-error.ts';
import { catalogCommand } from './cli/catalog.ts';
import { accountLinks, ACCOUNT_LINKS_USAGE } from './cli/accounts-links.ts';

const USAGE = `usage: rendergate <command>
  serve | api | worker                         run the service (default role: RENDERGATE_ROLE or serve)
  accounts create --email E [--name N]
  credits add --account ID --amount CENTS [--reason R]
  keys create --account ID [--name N] [--daily-cap CENTS|none] [--rate-limit PER_MINUTE]
  keys revoke --key ID
  generations refund --id ID
  catalog check FILE | catalog import cog URL [--id vendor/name]   validate a catalog; draft an entry from a Cog container
${OPS_USAGE}
${ACCOUNT_LINKS_USAGE}`;

function fail(message: string, code = 2): never {
  process.stderr.write(message + '\n');
  process.exit(code);
}

function intFlag(flags: Map<string, string>, name: string, required: boolean): number | undefined {
  const v = flags.get(name);
  if (v === undefined) { if (required) fail(`--${name} is required\n${USAGE}`); return undefined; }
  if (!/^\d{1,15}$/.test(v)) fail(`--${name} must be a whole number`);
  return Number(v);
}

async function operator(cmd: string, flags: Map<string, string>) {
  const config = loadConfig();
  const log = pino({ level: 'warn' }, pino.destination(2));
  const infra = await openInfra(config, log);
  try {
    const need = (name: string) => flags.get(name) ?? fail(`--${name} is required\n${USAGE}`);
    let out: unknown;
    switch (cmd) {
      case 'accounts create': out = await createAccount(infra.db, need('email'), flags.get('name') ?? null); break;
      case 'credits add': out = await addCredit(infra.db, need('account'), intFlag(flags, 'amount', true)!, flags.get('reason') ?? null); break;
      case 'keys create': {
        const cap = flags.get('daily-cap') === 'none' ? null : intFlag(flags, 'daily-cap', false) ?? null;
        out = await createKey(infra.db, config.keyPrefix, config.defaultRateLimitPerMinute, need('account'),
          { name: flags.get('name'), dailyCapCents: cap, rateLimitPerMinute: intFlag(flags, 'rate-limit', false) });
        break;
      }
      case 'keys revoke': out = await revokeKey(infra.db, need('key')); break;
      case 'accounts invite': case 'accounts reset-link': out = await accountLinks(cmd, infra, config, need, flags); break;
      case 'generations refund': {
        const { db, catalog, storage } = infra;
        const ledger = new Ledger(db, config.dayTimeZone);
        out = await new Generations({ db, catalog, config, storage, ledger }).adminRefund(need('id'));
        break;
      }
      default: fail(USAGE);
    }
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    await infra.close();
  }
}

async function serve(role: Role) {
  const config = loadConfig();
  const logging = createProcessLog(config.logLevel);
  exitOnFatal(logging);
  const running = await startService(config, role, { log: logging.log });
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    running.infra.log.info({ signal }, 'shutting down');
    // Whatever hangs (a client that never finishes reading), the process still ends: the renders are
    // back in the queue and the database recovers from its log. Every exit flushes the buffered log lines.
    setTimeout(() => logging.exit(1), config.shutdownGraceMs + 8_000).unref();
    running.close().then(() => logging.exit(0), (e) => { running.infra.log.error({ err: e }, 'shutdown failed'); logging.exit(1); });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

const { positional, flags } = parseFlags(process.argv.slice(2));
const [first = process.env.RENDERGATE_ROLE ?? 'serve', second] = positional;
const opsCommand = flags.has('version') ? OPS_COMMANDS.get('version') : OPS_COMMANDS.get(first);
try {
  if (opsCommand) await opsCommand(positional.slice(1), flags);
  else if (first === 'serve' || first === 'api' || first === 'worker') await serve(first);
  else if (first === 'help' || flags.has('help')) process.stdout.write(USAGE + '\n');
  else if (first === 'catalog') process.exitCode = await catalogCommand(second, positional.slice(2), flags).catch((e: Error) => fail(e.message, 1));
  else await operator(`${first} ${second ?? ''}`.trim(), flags);
} catch (e) {
  if (e instanceof ConfigError || e instanceof CatalogError || e instanceof CliError) fail(e.message, 1);
  if (e instanceof ApiError) fail(JSON.stringify({ code: e.code, message: e.message, details: e.details }), 1);
  throw e;
}
