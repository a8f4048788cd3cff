import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` + base64 of the key bytes (24 to 64 bytes here). */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_MIN_BYTES = 24;
export const SECRET_MAX_BYTES = 64;

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The key bytes of a secret, or null when it is not `whsec_` + canonical base64 of 24 to 64 bytes. */
export function secretBytes(secret: string): Buffer | null {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return null;
  const bytes = Buffer.from(encoded, 'base64');
  // Canonical only: the text must be what the bytes encode to, so one key has one spelling.
  if (bytes.toString('base64') !== encoded) return null;
  return bytes.length >= SECRET_MIN_BYTES && bytes.length <= SECRET_MAX_BYTES ? bytes : null;
}

/** `v1,<base64 HMAC-SHA256 over "<id>.<timestamp>.<body>">`, keyed with the secret's decoded bytes (Standard Webhooks). */
export function signDelivery(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
