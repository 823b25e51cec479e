import { issueBuyerAccessToken, issueSession, revokeCredential } from '#lib/db/credential.ts';
import { findOrCreateCustomer } from '#lib/db/customer.ts';
import { consumeLoginCode } from '#lib/db/login-code.ts';
import { HttpError } from '#lib/errors.ts';
import type { Customer } from '#lib/schemas/buyer.ts';
import { serverKeys } from '#lib/server-secret.ts';

/*
 * Buyer login by e-mail code, second step, shared by the API (access token) and the store's own
 * domain (a session; its handlers turn it into the cookie). The code is sent by
 * lib/flows/login-code.ts. Calls per request: verify = 1 or 2 (code) + 2 or 3 (customer) +
 * 1 (credential Put), + 1 (revoke) when the browser held a session of this store. Logout is
 * lib/flows/logout.ts (it needs no server secret, so its bundle does not carry the client).
 */

/** Wrong, expired, used or exhausted: one answer, so a guesser learns nothing about which. */
const invalidCode = () => new HttpError(401, { message: 'Invalid or expired code', code: 'LOGIN_CODE_INVALID' });

async function verifiedCustomer(storeId: number, email: string, code: string): Promise<Customer> {
  if (!(await consumeLoginCode(await serverKeys(), storeId, email, code))) throw invalidCode();
  return findOrCreateCustomer(storeId, email);
}

export async function loginWithAccessToken(storeId: number, email: string, code: string) {
  const customer = await verifiedCustomer(storeId, email, code);
  const token = await issueBuyerAccessToken(storeId, customer.id);
  return { access_token: token.token, token_type: 'Bearer' as const, expires_in: token.expires_in, customer };
}

export interface Session {
  /** The secret the browser presents (as the session cookie). */
  secret: string;
  maxAgeSeconds: number;
}

/**
 * A new session for the verified customer. A session of this store the browser already held is
 * revoked, so a shared browser never keeps the previous buyer's session alive server-side; the
 * revoke is conditioned on the store, so another store's session sent here is left alone.
 */
export async function loginWithSession(storeId: number, email: string, code: string, previousSession: string | undefined): Promise<{ session: Session; customer: Customer }> {
  const customer = await verifiedCustomer(storeId, email, code);
  const [session] = await Promise.all([issueSession(storeId, customer.id), previousSession ? revokeCredential(previousSession, 'session', storeId) : Promise.resolve(false)]);
  return { session: { secret: session.sessionId, maxAgeSeconds: session.max_age }, customer };
}
