import { createHash } from 'node:crypto';

/**
 * Opaque list cursors (order list, webhook delivery log): base64url JSON of a position, then a
 * SHA-256 check of that text under the list's `purpose`. The check only catches tampering and
 * mix-ups between lists; the key a cursor resumes from is always rebuilt from the caller's own
 * store, so a forged cursor can move within the caller's list but never reach another store's.
 */
const check = (purpose: string, body: string) => createHash('sha256').update(`${purpose}:${body}`).digest('base64url').slice(0, 22);

export function sealCursor(purpose: string, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${check(purpose, body)}`;
}

/** The payload of a cursor this list issued, or undefined (the caller answers 400). */
export function openCursor(purpose: string, cursor: string, maxLength: number): Record<string, unknown> | undefined {
  if (cursor.length > maxLength) return undefined;
  const [body, given, ...rest] = cursor.split('.');
  if (!body || !given || rest.length > 0 || given !== check(purpose, body)) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    return payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
