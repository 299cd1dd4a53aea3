/** A refusal the operator can act on: main.ts prints its message as it is and exits with code 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** The command line itself is wrong (a required flag missing, a bad number): usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
