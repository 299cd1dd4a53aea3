/**
 * A refusal the operator can act on: main.ts prints its message as it is and exits with `exitCode`:
 * 1 by default, 2 when what the operator gave (a flag, an environment variable) is wrong, as for a
 * usage error but in one line, without the usage after it.
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** The command line itself is wrong (a required flag missing, a bad number): usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
