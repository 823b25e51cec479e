import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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
