// A real SMTP server (smtp-server), as an operator's would be, and a service node that mails through
// it: the studio's tests of password-reset and sign-up mails share this setup.
import { SMTPServer } from 'smtp-server';
import { startTestService, type TestService } from '../helpers/service.ts';

export interface Mail {
  to: string;
  body: string;
}

/** An API node on the database at `dbUrl` with RENDERGATE_SMTP_URL set; `mails` fills as they arrive. */
export async function startMailingService(
  dbUrl: string,
): Promise<{ svc: TestService; mails: Mail[]; stop: () => Promise<void> }> {
  const mails: Mail[] = [];
  const smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      let body = '';
      stream.on('data', (d) => {
        body += d;
      });
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo[0]?.address ?? '', body });
        done();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  const closeSmtp = () => new Promise<void>((r) => smtp.close(() => r()));
  const port = (smtp.server.address() as { port: number }).port;
  let svc: TestService;
  try {
    svc = await startTestService(dbUrl, {
      role: 'api',
      env: { RENDERGATE_SMTP_URL: `smtp://127.0.0.1:${port}` },
    });
  } catch (e) {
    await closeSmtp();
    throw e;
  }
  return {
    svc,
    mails,
    stop: async () => {
      await svc.stop();
      await closeSmtp();
    },
  };
}
