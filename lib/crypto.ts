import { createHash, randomBytes } from 'node:crypto';

/**
 * Secrets (API tokens, API keys, buyer access tokens, session ids, handoffs) are 256 random
 * bits with a readable prefix. Only their SHA-256 is stored: with that much entropy a fast hash
 * is safe, and it lets a request find its credential with one GetItem.
 */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
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
