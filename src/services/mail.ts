// Mail through the operator's SMTP server (nodemailer), when RENDERGATE_SMTP_URL is set: password
// resets, invitations, and notices to an account's owners and billing members (billingContacts).
import nodemailer from 'nodemailer';

export interface Mailer {
  send(to: string, subject: string, text: string): Promise<void>;
}

export function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    send: async (to, subject, text) => {
      await transport.sendMail({ from, to, subject, text });
    },
  };
}

/** The addresses an account's money notices go to: its owners and billing members. */
export async function mailBillingContacts(
  mailer: Mailer | null,
  emails: readonly string[],
  subject: string,
  text: string,
): Promise<number> {
  if (!mailer) return 0;
  for (const to of emails) await mailer.send(to, subject, text);
  return emails.length;
}
