import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { config } from '#lib/config.ts';

/**
 * The one place cookies are read and written: the buyer's session on the store's own domain.
 * Flows deal in the session's secret and lifetime; only this module knows the cookie's name
 * and attributes.
 */
export const SESSION_COOKIE = 'store_session';

/** API Gateway (payload 2.0) moves the Cookie header into `cookies`, one entry per cookie. */
export function readSessionCookie(event: APIGatewayProxyEventV2): string | undefined {
  for (const cookie of event.cookies ?? []) {
    const [name, ...rest] = cookie.trim().split('=');
    if (name === SESSION_COOKIE && rest.length > 0) return rest.join('=');
  }
  return undefined;
}

/** The Set-Cookie value; `Secure` is dropped only when the local stack serves the store domains over plain http. */
export function sessionCookie(value: string, maxAgeSeconds: number): string {
  const attributes = [`${SESSION_COOKIE}=${value}`, `Max-Age=${maxAgeSeconds}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (maxAgeSeconds === 0) attributes.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (!config.insecureCookies) attributes.push('Secure');
  return attributes.join('; ');
}

/** Tells the browser to forget its session cookie (after a logout). */
export const expiredSessionCookie = () => sessionCookie('', 0);
