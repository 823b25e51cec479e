import { createHash } from 'node:crypto';
import { keyedHash, macMatches, type ServerKeys } from '#lib/crypto.ts';
import { badRequest } from '#lib/errors.ts';
import { CURSOR_MAX } from '#lib/schemas/order.ts';

/*
 * Opaque list cursors (cursor mode of `GET /v1/app/order` and `GET /v1/app/command`): base64url
 * JSON `{s: store, f: digest of the filters, ...position}` followed by an HMAC-SHA256 of that
 * text under the server secret (lib/server-secret.ts), salted with the list's name so that one
 * list's cursor is refused by another: nobody without the secret can make or edit a cursor that
 * passes (an unkeyed check could be recomputed by anyone). Made with the current key; the previous
 * one is accepted while a rotation's grace period lasts. It is only a position: the key it resumes
 * from is rebuilt from the caller's own store and filters, so even a cursor that passed the check
 * could never reach another store's items. A cursor that fails the check, names another store or
 * was issued for other filters is a 400 `INVALID_CURSOR`; each list checks its own position fields
 * (`position` answers undefined).
 */
/** 22 base64url characters: 132 bits of the HMAC. */
const MAC_LENGTH = 22;

export function cursorCodec<P extends Record<string, unknown>>(list: string, position: (payload: Record<string, unknown>) => P | undefined) {
  const filterDigest = (filters: readonly unknown[]) => createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
  const message = (body: string) => `${list}-cursor:v2:${body}`;
  return {
    encode(storeId: number, filters: readonly unknown[], at: P, keys: ServerKeys): string {
      const body = Buffer.from(JSON.stringify({ s: storeId, f: filterDigest(filters), ...at })).toString('base64url');
      return `${body}.${keyedHash(keys.current, message(body)).slice(0, MAC_LENGTH)}`;
    },
    decode(storeId: number, filters: readonly unknown[], cursor: string, keys: ServerKeys): P {
      if (cursor.length > CURSOR_MAX) throw invalidCursor();
      const [body, mac, ...rest] = cursor.split('.');
      if (!body || !mac || rest.length > 0 || !macMatches(keys, message(body), mac, MAC_LENGTH)) throw invalidCursor();
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        throw invalidCursor();
      }
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw invalidCursor();
      const fields: Record<string, unknown> = { ...payload };
      const at = fields.s === storeId && fields.f === filterDigest(filters) ? position(fields) : undefined;
      if (!at) throw invalidCursor();
      return at;
    },
  };
}

export const invalidCursor = () => badRequest('page_cursor is invalid, or was issued for another store or other filters', 'INVALID_CURSOR', 'page_cursor');

/** A positive safe integer, as cursor positions hold ids. */
export const isId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
