// The operator's commands on the local installation: the data dir's embedded database (started as a
// guest when the server runs) or DATABASE_URL. Links use the public URL the server recorded at start.
import pino from 'pino';
import { openInfra } from '../app.ts';
import type { Config } from '../config.ts';
import { addCredit, createAccount, listAccounts, resolveAccount } from '../services/accounts.ts';
import { inviteLink, resetLink } from '../services/invites.ts';
import { createKey, revokeKey } from '../services/keys.ts';
import { Members } from '../services/members.ts';
import { Generations } from '../services/generations.ts';
import { Ledger } from '../ledger/ledger.ts';
import { recordedPublicUrl } from '../services/server-info.ts';
import { parseLimit } from '../services/paging.ts';
import { CliError } from './cli-error.ts';
import { OPERATOR } from '../domain/principal.ts';
import type { OperatorApi } from './operator-api.ts';

export async function localOperator(config: Config, env: NodeJS.ProcessEnv): Promise<OperatorApi> {
  const infra = await openInfra(config, pino({ level: 'warn' }, pino.destination(2)));
  const { db } = infra;
  // The server's own URL; the shell's RENDERGATE_PUBLIC_URL only before any server has started.
  const publicUrl = async () => {
    const recorded = await recordedPublicUrl(db);
    if (recorded) return recorded;
    if (env.RENDERGATE_PUBLIC_URL) return config.publicUrl;
    throw new CliError(
      'no server has started on this database yet, so its public URL is unknown: start it ' +
        'once, set RENDERGATE_PUBLIC_URL, or use RENDERGATE_URL to ask a running server',
    );
  };
  // no mail from the command line: an invite's link is printed
  let made: Members | null = null;
  const members = () => (made ??= new Members(db, config.publicUrl, null));
  return {
    listAccounts: (o) =>
      listAccounts(db, {
        query: o.query,
        limit: o.limit ?? parseLimit(undefined),
        cursor: o.cursor ?? null,
      }),
    account: (idOrEmail) => resolveAccount(db, idOrEmail),
    createAccount: (email, name) => createAccount(db, email, name),
    invite: async (email, name) => inviteLink(db, await publicUrl(), email, name),
    resetLink: async (email) => resetLink(db, await publicUrl(), email),
    addCredit: (id, amount, reason) => addCredit(db, id, amount, reason, { by: OPERATOR }),
    createKey: (id, o) =>
      createKey(db, config.keyPrefix, config.defaultRateLimitPerMinute, id, o, { by: OPERATOR }),
    revokeKey: (id) => revokeKey(db, id, { by: OPERATOR }),
    refund: (id) =>
      new Generations({
        db,
        catalog: infra.catalog,
        config,
        storage: infra.storage,
        ledger: new Ledger(db, config.dayTimeZone),
      }).adminRefund(OPERATOR, id),
    listMembers: async (acct) => ({
      data: (await members().list(OPERATOR, { account: acct })).members,
    }),
    addMember: (acct, email, role) =>
      members().invite(OPERATOR, { email, role, addKnown: true }, { account: acct }),
    setMemberRole: (acct, user, role) =>
      members().changeRole(OPERATOR, user, role, { account: acct }),
    removeMember: (acct, user, revokeKeys) =>
      members().remove(OPERATOR, user, { revokeKeys }, { account: acct }),
    close: () => infra.close(),
  };
}
