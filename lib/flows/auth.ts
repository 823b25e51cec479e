import { config } from '#lib/config.ts';
import { issueBuyerAccessToken, issueSession, revokeCredential } from '#lib/db/credential.ts';
import { findOrCreateCustomer } from '#lib/db/customer.ts';
import { consumeLoginCode } from '#lib/db/login-code.ts';
import { SESSION_COOKIE } from '#lib/http/auth.ts';
import { HttpError } from '#lib/errors.ts';
import type { Customer } from '#lib/schemas/buyer.ts';

/**
 * Buyer login by e-mail code, second step, shared by the API (access token) and the store's own
 * domain (session cookie). The code is sent by lib/flows/login-code.ts. Calls per request:
 * verify = 1 or 2 (code) + 2 or 3 (customer) + 1 (credential Put).
 */

/** Wrong, expired, used or exhausted: one answer, so a guesser learns nothing about which. */
const invalidCode = () => new HttpError(401, { message: 'Invalid or expired code', code: 'LOGIN_CODE_INVALID' });

async function verifiedCustomer(storeId: number, email: string, code: string): Promise<Customer> {
  if (!(await consumeLoginCode(storeId, email, code))) throw invalidCode();
  return findOrCreateCustomer(storeId, email);
}

export async function loginWithAccessToken(storeId: number, email: string, code: string) {
  const customer = await verifiedCustomer(storeId, email, code);
  const token = await issueBuyerAccessToken(storeId, customer.id);
  return { access_token: token.token, token_type: 'Bearer' as const, expires_in: token.expires_in, customer };
}

/**
 * A new session for the verified customer. A session cookie the browser already held is
 * revoked, so a shared browser never keeps the previous buyer's session alive server-side.
 */
export async function loginWithSession(storeId: number, email: string, code: string, previousSession: string | undefined) {
  const customer = await verifiedCustomer(storeId, email, code);
  const [session] = await Promise.all([
    issueSession(storeId, customer.id),
    previousSession ? revokeCredential(previousSession, 'session') : Promise.resolve(false),
  ]);
  return { cookie: sessionCookie(session.sessionId, session.max_age), body: { expires_in: session.max_age, customer } };
}

export async function logout(session: string | undefined): Promise<string> {
  if (session) await revokeCredential(session, 'session');
  return sessionCookie('', 0);
}

/** `Secure` is dropped only when the local stack serves the store domains over plain http. */
export function sessionCookie(value: string, maxAgeSeconds: number): string {
  const attributes = [`${SESSION_COOKIE}=${value}`, `Max-Age=${maxAgeSeconds}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (maxAgeSeconds === 0) attributes.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (!config.insecureCookies) attributes.push('Secure');
  return attributes.join('; ');
}
