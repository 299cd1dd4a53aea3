// CLI entry: serve | api | worker, and the operator commands, each printing JSON. The command line is
// parsed (src/cli/parse.ts) before anything starts, so `--help` and a mistake never touch the data dir.
import { loadConfig, ConfigError, type Role } from './config.ts';
import { ApiError } from './domain/errors.ts';
import { CatalogError } from './domain/catalog-load.ts';
import { parseCommandLine } from './cli/parse.ts';
import { commandUsage, type CommandSpec, type GlobalFlags } from './cli/commands.ts';
import { CliError, UsageError } from './cli/cli-error.ts';

function exit(stream: NodeJS.WriteStream, text: string, code: number): never {
  stream.write(text.endsWith('\n') ? text : text + '\n');
  process.exit(code);
}

/** A port already taken, in one line with the way out, instead of the listen error's stack. */
function portTaken(e: unknown, configured: number): string | null {
  const err = e as { code?: unknown; port?: unknown; address?: unknown } | null;
  if (err?.code !== 'EADDRINUSE') return null;
  const port = typeof err.port === 'number' ? err.port : configured;
  const on = typeof err.address === 'string' ? ` on ${err.address}` : '';
  if (port !== configured)
    return `rendergate: port ${port}${on} is already in use; stop what uses it or change its port`;
  const next = port > 0 && port < 65535 ? port + 1 : 8081;
  return (
    `rendergate: port ${port}${on} is already in use; stop what uses it, ` +
    `or choose another port: PORT=${next} npm start`
  );
}

async function serve(role: Role) {
  // Tracing first, so that its hooks see pg and node:http load; without the variable, never loaded.
  const { tracingWanted, stopTracing } = await import('./tracing/trace.ts');
  if (tracingWanted(process.env)) (await import('./tracing/start.ts')).startTracing(role);
  const { startService } = await import('./app.ts');
  const { createProcessLog, exitOnFatal } = await import('./cli/logger.ts');
  const config = loadConfig();
  const logging = createProcessLog(config.logLevel);
  exitOnFatal(logging);
  let running: Awaited<ReturnType<typeof startService>>;
  try {
    running = await startService(config, role, { log: logging.log, access: logging.access });
  } catch (e) {
    const taken = portTaken(e, config.port);
    if (taken === null) throw e;
    logging.flush().then(
      () => exit(process.stderr, taken, 1),
      () => exit(process.stderr, taken, 1),
    );
    return;
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    running.infra.log.info({ signal }, 'shutting down');
    // Whatever hangs (a client that never finishes reading), the process still ends: the renders are
    // back in the queue and the database recovers from its log. Every exit flushes the buffered log lines.
    setTimeout(() => logging.exit(1), config.shutdownGraceMs + 8_000).unref();
    running
      .close()
      .then(stopTracing)
      .then(
        () => logging.exit(0),
        (e) => {
          running.infra.log.error({ err: e }, 'shutdown failed');
          logging.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** accounts, credits, keys, generations: against RENDERGATE_URL's admin API, or the local installation. */
async function operator(
  spec: CommandSpec,
  flags: Map<string, string>,
  positionals: string[],
  global: GlobalFlags,
) {
  const { runOperatorCommand } = await import('./cli/operator-api.ts');
  const env = process.env;
  const api = env.RENDERGATE_URL
    ? (await import('./cli/remote-operator.ts')).remoteOperator(
        env.RENDERGATE_URL,
        env.RENDERGATE_ADMIN_TOKEN,
        global,
      )
    : await (await import('./cli/local-operator.ts')).localOperator(loadConfig(), env);
  try {
    const out = await runOperatorCommand(spec.name, flags, positionals, api);
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    await api.close();
  }
}

async function run(
  spec: CommandSpec,
  flags: Map<string, string>,
  positionals: string[],
  global: GlobalFlags,
) {
  const name = spec.name;
  if (name === 'serve' || name === 'api' || name === 'worker') return serve(name);
  if (spec.remote) return operator(spec, flags, positionals, global);
  if (name === 'version') {
    const { VERSION } = await import('./domain/version.ts');
    return void process.stdout.write(`rendergate ${VERSION}\n`);
  }
  if (name === 'completion') {
    const { completionScript } = await import('./cli/completion.ts');
    return void process.stdout.write(completionScript(positionals[0]));
  }
  if (name.startsWith('catalog ')) {
    const { catalogCommand } = await import('./cli/catalog.ts');
    process.exitCode = await catalogCommand(name.split(' ')[1], positionals, flags);
    return;
  }
  const { OPS_COMMANDS } = await import('./cli/ops-commands.ts');
  await OPS_COMMANDS.get(name)!(positionals, flags);
}

const parsed = parseCommandLine(process.argv.slice(2));
if (parsed.kind === 'help') exit(process.stdout, parsed.text, 0);
if (parsed.kind === 'usage-error') exit(process.stderr, parsed.text, 2);
try {
  await run(parsed.spec, parsed.flags, parsed.positionals, parsed.global);
} catch (e) {
  if (e instanceof UsageError)
    exit(process.stderr, `rendergate: ${e.message}\n\n${commandUsage(parsed.spec)}`, 2);
  if (e instanceof CliError) exit(process.stderr, e.message, e.exitCode);
  if (e instanceof ConfigError || e instanceof CatalogError) exit(process.stderr, e.message, 1);
  if (e instanceof ApiError)
    exit(
      process.stderr,
      JSON.stringify({ code: e.code, message: e.message, details: e.details }),
      1,
    );
  throw e;
}
