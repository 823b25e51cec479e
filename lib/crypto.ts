import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets (API tokens, API keys, buyer access tokens, session ids, handoffs) are 256 random
 * bits with a readable prefix. Only their SHA-256 is stored: with that much entropy a fast hash
 * is safe, and it lets a request find its credential with one GetItem.
 */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/**
 * A webhook's signing secret: 256 random bits as `whsec_<standard base64>`, the form the Standard
 * Webhooks libraries read as their key (lib/domain/webhook.ts signs with both schemes from it).
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export const SECRET_PREFIX = {
  apiToken: 'sat',
  apiKey: 'sak',
  buyerAccessToken: 'sbt',
  session: 'sss',
  handoff: 'sho',
} as const;

/**
 * The server secret (lib/server-secret.ts): `current` keys every new hash; `previous`, while a
 * rotation's grace period lasts, is still accepted when a hash is checked.
 */
export interface ServerKeys {
  current: string;
  previous?: string;
}

/**
 * Keys for cursors that never leave the process that made them (the admin CLI and the local seed
 * walking a list): a throwaway key instead of the server secret, which they need not read.
 */
export function processLocalKeys(): ServerKeys {
  return { current: randomBytes(32).toString('hex') };
}

/**
 * HMAC-SHA256 under a server key, for what a table dump must not let anyone brute-force (a
 * 6-digit login code has only 10^6 values) and what a client carries back (cursors, quote ids):
 * without the key, neither can be recomputed.
 */
export function keyedHash(key: string, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('base64url');
}

/** The hashes a presented value may match: under the current key, then the previous one (rotation grace). */
export function acceptedHashes(keys: ServerKeys, message: string): string[] {
  return [keys.current, ...(keys.previous ? [keys.previous] : [])].map((key) => keyedHash(key, message));
}

/** True when `mac` is the (possibly truncated, `length` characters) keyed hash of `message` under an accepted key; constant time per key. */
export function macMatches(keys: ServerKeys, message: string, mac: string, length: number): boolean {
  const presented = Buffer.from(mac);
  return acceptedHashes(keys, message).some((hash) => {
    const expected = Buffer.from(hash.slice(0, length));
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
}

/** The AES-256 key a server key gives for one purpose: the raw HMAC-SHA256 of the purpose under it. */
const sealingKey = (serverKey: string, purpose: string) => createHmac('sha256', serverKey).update(`seal:${purpose}`, 'utf8').digest();

/**
 * A value sealed under a server key (AES-256-GCM, base64url of iv | tag | ciphertext): for what a
 * table dump must not give away, yet must come back whole later (a payment account's notify key,
 * lib/flows/payment-provider-read.ts), without a KMS call.
 */
export function sealUnder(serverKey: string, purpose: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(serverKey, purpose), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The value `sealUnder` sealed with this server key and purpose, or undefined (another key, or not a seal). */
export function unsealUnder(serverKey: string, purpose: string, sealed: string): string | undefined {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(serverKey, purpose), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
