import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { call, type ApiResponse } from './client.ts';

/** Buyer helpers over HTTP: codes come from the local stack's outbox, as a developer reads them. */
export interface OutboxMail {
  store_domain: string;
  to: string;
  subject: string;
  text: string;
  code: string | null;
}

export function outbox(): OutboxMail[] {
  let text = '';
  try {
    text = readFileSync(join(inject('localDir'), 'outbox.jsonl'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as OutboxMail);
}

export function mailsTo(storeDomain: string, email: string): OutboxMail[] {
  return outbox().filter((mail) => mail.store_domain === storeDomain && mail.to === email.toLowerCase());
}

/** The code of the latest login mail to this address of this store. */
export function lastCode(storeDomain: string, email: string): string {
  const code = mailsTo(storeDomain, email).at(-1)?.code;
  if (!code) throw new Error(`no login code mailed to ${email} for ${storeDomain}`);
  return code;
}

let emailCounter = 0;
export const uniqueEmail = (name = 'buyer') => `${name}.${process.pid}.${Date.now().toString(36)}.${++emailCounter}@example.com`;

const apiHeaders = (domain: string) => ({ 'x-store-domain': domain });

export async function requestCode(domain: string, email: string): Promise<string> {
  const res = await call('POST', '/v1/webstore/auth/login', { json: { email }, headers: apiHeaders(domain) });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return lastCode(domain, email);
}

export const verify = (domain: string, email: string, code: string) => call('POST', '/v1/webstore/auth/verify', { json: { email, code }, headers: apiHeaders(domain) });

/** A buyer access token (and the customer) of a fresh login. */
export async function buyerLogin(domain: string, email = uniqueEmail()) {
  const res = await verify(domain, email, await requestCode(domain, email));
  if (res.status !== 200) throw new Error(`verify failed: ${res.status} ${res.text}`);
  const token = res.body.access_token as string;
  const headers = { ...apiHeaders(domain) };
  return {
    token,
    customer: res.body.customer,
    email,
    get: (path: string, extraHeaders: Record<string, string> = {}) => call('GET', path, { token, headers: { ...headers, ...extraHeaders } }),
    post: (path: string, json?: unknown, extraHeaders: Record<string, string> = {}) => call('POST', path, { token, json, headers: { ...headers, ...extraHeaders } }),
    delete: (path: string) => call('DELETE', path, { token, headers }),
    patch: (path: string, json?: unknown, extraHeaders: Record<string, string> = {}) => call('PATCH', path, { token, json, headers: { ...headers, ...extraHeaders } }),
  };
}

/** The `store_session=<id>` pair of a response's Set-Cookie, ready for a Cookie header. */
export function sessionCookieOf(res: ApiResponse): string | undefined {
  const cookies = [res.headers['set-cookie'] ?? []].flat();
  return cookies.find((cookie) => cookie.startsWith('store_session='))?.split(';')[0];
}

/** A session cookie on the store's own domain, from a fresh login there. */
export async function sessionLogin(domain: string, email = uniqueEmail()) {
  const login = await call('POST', '/auth/login', { host: domain, json: { email } });
  if (login.status !== 200) throw new Error(`store login failed: ${login.status} ${login.text}`);
  const res = await call('POST', '/auth/verify', { host: domain, json: { email, code: lastCode(domain, email) } });
  const cookie = sessionCookieOf(res);
  if (res.status !== 200 || !cookie) throw new Error(`store verify failed: ${res.status} ${res.text}`);
  return { cookie, customer: res.body.customer, email, response: res };
}
