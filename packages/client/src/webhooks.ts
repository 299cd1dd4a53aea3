// Verifies a webhook delivery (Standard Webhooks): the signature is an HMAC-SHA256 of
// "{webhook-id}.{webhook-timestamp}.{body}" keyed with the base64-decoded secret after `whsec_`.
// The check runs in WebCrypto's HMAC verify (constant time, unlike comparing strings), over the exact
// raw body, and refuses a timestamp more than the tolerance away from now (a replayed old delivery).
import { RendergateError } from './errors.js';
import type { WebhookEvent } from './types.js';

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Largest distance in seconds between webhook-timestamp and now (default 300). */
  toleranceSeconds?: number;
  /** Now, in milliseconds (for tests). */
  now?: number;
}

const invalid = (message: string) =>
  new RendergateError({ status: 0, code: 'WEBHOOK_INVALID', message });

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function')
    return (headers as Headers).get(name) ?? undefined;
  const rec = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : rec[key];
  return Array.isArray(v) ? v.join(' ') : v;
}

function base64Bytes(b64: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}

/** The event of a genuine, fresh delivery; a RendergateError WEBHOOK_INVALID otherwise. */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeaderSource,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw invalid('The webhook-id, webhook-timestamp and webhook-signature headers are required.');
  if (!/^\d{1,12}$/.test(timestamp))
    throw invalid('webhook-timestamp is not a Unix time in seconds.');
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300))
    throw invalid('webhook-timestamp is too far from now.');
  const keyBytes = base64Bytes(
    secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret,
  );
  if (!keyBytes || keyBytes.length === 0) throw invalid('The secret is not a whsec_ secret.');
  const body =
    typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : new Uint8Array(rawBody);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const key = await crypto.subtle.importKey(
    'raw',
    keyBytes,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  for (const candidate of signatures.split(' ')) {
    const [version, sig] = candidate.split(',', 2);
    const sigBytes = version === 'v1' && sig ? base64Bytes(sig) : undefined;
    if (sigBytes && (await crypto.subtle.verify('HMAC', key, sigBytes, signed))) {
      try {
        return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
      } catch {
        throw invalid('The signed body is not JSON.');
      }
    }
  }
  throw invalid('No webhook-signature matches the body.');
}
