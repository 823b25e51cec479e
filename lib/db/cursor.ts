import { createHash } from 'node:crypto';
import { badRequest } from '#lib/errors.ts';
import { CURSOR_MAX } from '#lib/schemas/order.ts';

/**
 * Opaque list cursors (cursor mode of `GET /v1/app/order` and `GET /v1/app/command`): base64url
 * JSON `{s: store, f: digest of the filters, ...position}` followed by a SHA-256 check of that
 * text, salted with the list's name so that one list's cursor is refused by another. It is only a
 * position: the key it resumes from is rebuilt from the caller's own store and filters, so a cursor
 * forged around the check can move within the caller's own list but never reach another store's
 * items. A cursor that fails the check, names another store or was issued for other filters is a
 * 400 `INVALID_CURSOR`; each list checks its own position fields (`position` answers undefined).
 */
export function cursorCodec<P extends Record<string, unknown>>(list: string, position: (payload: Record<string, unknown>) => P | undefined) {
  const filterDigest = (filters: readonly unknown[]) => createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
  const check = (body: string) => createHash('sha256').update(`${list}-cursor:v1:${body}`).digest('base64url').slice(0, 22);
  return {
    encode(storeId: number, filters: readonly unknown[], at: P): string {
      const body = Buffer.from(JSON.stringify({ s: storeId, f: filterDigest(filters), ...at })).toString('base64url');
      return `${body}.${check(body)}`;
    },
    decode(storeId: number, filters: readonly unknown[], cursor: string): P {
      if (cursor.length > CURSOR_MAX) throw invalidCursor();
      const [body, sum, ...rest] = cursor.split('.');
      if (!body || !sum || rest.length > 0 || sum !== check(body)) throw invalidCursor();
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        throw invalidCursor();
      }
      const fields = (payload ?? {}) as Record<string, unknown>;
      const at = fields.s === storeId && fields.f === filterDigest(filters) ? position(fields) : undefined;
      if (!at) throw invalidCursor();
      return at;
    },
  };
}

export const invalidCursor = () => badRequest('page_cursor is invalid, or was issued for another store or other filters', 'INVALID_CURSOR', 'page_cursor');

/** A positive safe integer, as cursor positions hold ids. */
export const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1;
