// `rendergate accounts invite --email E [--name N]` and `rendergate accounts reset-link --email E`: the
// operator's one-time links to set a password in the studio, printed as JSON.
import type { Config } from '../config.ts';
import type { Infra } from '../app.ts';
import { inviteLink, resetLink, type Link } from '../services/invites.ts';

export const ACCOUNT_LINKS_USAGE = `  accounts invite --email E [--name N]        print a one-time link to set a password (creates the account)
  accounts reset-link --email E                print a one-time password reset link (valid 1 hour)`;

export async function accountLinks(cmd: string, infra: Infra, config: Config, need: (flag: string) => string, flags: Map<string, string>): Promise<Link> {
  return cmd === 'accounts invite'
    ? inviteLink(infra.db, config.publicUrl, need('email'), flags.get('name') ?? null)
    : resetLink(infra.db, config.publicUrl, need('email'));
}
