// `rendergate audit verify --account ID|EMAIL`: walks the account's audit chain on the local
// installation (its data dir or DATABASE_URL), printing how many events it checked and exiting 0,
// or naming the first event whose hash or link does not hold and exiting 1. It reads the database
// itself rather than a server's answers: the check is of what is stored.
import pino from 'pino';
import { verifyChain } from '../audit/verify.ts';
import { loadConfig } from '../config.ts';
import { resolveAccount } from '../services/accounts.ts';
import { CliError, UsageError } from './cli-error.ts';
import { openInfra } from './infra.ts';

const PROBLEM = {
  hash: 'its hash is not the hash of its content (the event was changed)',
  link:
    'its prevHash is not the hash of the event before it ' +
    '(an event was removed, added or moved)',
};

export async function auditVerify(_args: string[], flags: Map<string, string>): Promise<void> {
  const named = flags.get('account');
  if (!named) throw new UsageError('--account is required');
  const infra = await openInfra(loadConfig(), pino({ level: 'warn' }, pino.destination(2)));
  try {
    const account = await resolveAccount(infra.db, named);
    const r = await verifyChain(infra.db, account.id);
    if (!r.ok) {
      throw new CliError(
        `rendergate: the audit chain of ${account.id} breaks at event ${r.at.id} ` +
          `(number ${r.at.seq}): ${PROBLEM[r.at.problem]}; ${r.checked} events before it hold`,
      );
    }
    process.stdout.write(`${r.checked} events checked: the audit chain of ${account.id} holds\n`);
  } finally {
    await infra.close();
  }
}
