/** A refusal the operator can act on: main.ts prints its message as it is and exits with code 1. */
export class CliError extends Error {
  override name = 'CliError';
}
