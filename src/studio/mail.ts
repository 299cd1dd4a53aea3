// Password-reset mail through the operator's SMTP server (nodemailer), when RENDERGATE_SMTP_URL is set.
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
