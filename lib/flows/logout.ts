import { revokeCredential } from '#lib/db/credential.ts';
import { customerUnauthenticated } from '#lib/errors.ts';

/**
 * Ending a store-domain session (`POST {store_url}/auth/logout`). Apart from lib/flows/auth.ts
 * because that module reads the server secret (login codes), which logout never needs.
 *
 * | cookie sent                                   | answer | calls (after the BatchGet of domain + cookie) |
 * |-----------------------------------------------|--------|-----------------------------------------------|
 * | none                                          | 200    | 0                                             |
 * | a live session of this store                  | 200    | 1 DeleteItem if kind and store match          |
 * | another store's, expired, revoked, made up    | 401    | 0: nothing is revoked                         |
 *
 * A cookie that is no session of this store is refused rather than answered 200, so a logout
 * through the wrong host never looks as if it had ended anything; the same 401 for all of them
 * tells a prober nothing about whether a secret is live somewhere else. The revoke's own
 * condition holds the store too, so even a caller that skipped the check revokes nothing foreign.
 */
export async function logout(storeId: number, cookie: { secret?: string; sessionOfStore?: boolean }): Promise<void> {
  if (cookie.secret === undefined) return;
  if (!cookie.sessionOfStore) throw customerUnauthenticated();
  // False when a concurrent logout got there first: the session is ended either way.
  await revokeCredential(cookie.secret, 'session', storeId);
}
