// A real OpenID Provider for the single sign-on tests: the certified `oidc-provider` package
// (panva/node-oidc-provider), in this process on 127.0.0.1, with one client (ours), RSA keys made
// here, and an interaction step that signs in `user` at once (no login form to drive). Knobs a
// test turns: who signs in, how long a code lives, and `forgeAudience`, which swaps the token
// endpoint's ID token for one signed with the provider's own key for another audience, so our
// check of `aud` is what refuses it.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface OidcUser {
  sub: string;
  email: string;
  email_verified: boolean;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  user: OidcUser;
  codeTtlS: number;
  forgeAudience: string | null;
  /** Serves the relying party whose callbacks are these (known once the service has its port). */
  serve(redirectUris: string[]): void;
  close(): Promise<void>;
}

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** Starts the provider's server (its issuer known at once); serve() then sets up the client. */
export async function startProvider(): Promise<TestProvider> {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = {
    ...privateKey.export({ format: 'jwk' }),
    kid: 'test-key',
    alg: 'RS256',
    use: 'sig',
  };
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t: TestProvider = {
    issuer,
    clientId: 'rendergate-test',
    clientSecret: crypto.randomBytes(24).toString('hex'),
    user: { sub: 'u1', email: 'sso@example.test', email_verified: true },
    codeTtlS: 60,
    forgeAudience: null,
    serve: (redirectUris) => serve(t, redirectUris),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const serve = (t: TestProvider, redirectUris: string[]) => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: t.clientId,
          client_secret: t.clientSecret,
          redirect_uris: redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      jwks: { keys: [jwk] },
      cookies: { keys: [crypto.randomBytes(16).toString('hex')] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      features: { devInteractions: { enabled: false } },
      pkce: { required: () => true },
      ttl: { AuthorizationCode: () => t.codeTtlS },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      findAccount: (_ctx, sub) => ({
        accountId: sub,
        claims: () => ({ ...t.user, sub }),
      }),
    });
    provider.on('server_error', () => undefined);
    // The forged answer: the real one with its ID token re-signed for another audience.
    provider.use(async (ctx, next) => {
      await next();
      const body = ctx.body as { id_token?: string } | undefined;
      if (ctx.path !== '/token' || !t.forgeAudience || !body?.id_token) return;
      const claims = JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString());
      const head = b64url({ alg: 'RS256', kid: 'test-key', typ: 'JWT' });
      const data = `${head}.${b64url({ ...claims, aud: t.forgeAudience })}`;
      const sig = crypto.sign('sha256', Buffer.from(data), privateKey).toString('base64url');
      ctx.body = { ...body, id_token: `${data}.${sig}` };
    });
    const callback = provider.callback();
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      if (!req.url?.startsWith('/interaction/')) return void callback(req, res);
      // Signs `user` in and grants our client what it asked, as a person clicking through would.
      void (async () => {
        const details = await provider.interactionDetails(req, res);
        const grant = new provider.Grant({
          accountId: t.user.sub,
          clientId: String(details.params.client_id),
        });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: t.user.sub }, consent: { grantId } },
          { mergeWithLastSubmission: false },
        );
      })().catch((e: unknown) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    });
  };
  return t;
}
