import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expiredSessionCookie, readSessionCookie, sessionCookie } from '#lib/http/cookies.ts';

afterEach(() => vi.unstubAllEnvs());

describe('sessionCookie', () => {
  it('is HttpOnly, Secure, SameSite=Lax for the whole site, with Max-Age', () => {
    vi.stubEnv('INSECURE_COOKIES', '');
    expect(sessionCookie('sss_abc', 3600).split('; ')).toEqual(['store_session=sss_abc', 'Max-Age=3600', 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Secure']);
  });

  it('drops Secure only when the local stack serves plain http', () => {
    vi.stubEnv('INSECURE_COOKIES', '1');
    expect(sessionCookie('sss_abc', 3600)).not.toContain('Secure');
  });

  it('clears with an empty value, Max-Age=0 and a past Expires', () => {
    vi.stubEnv('INSECURE_COOKIES', '');
    expect(sessionCookie('', 0).split('; ')).toEqual(['store_session=', 'Max-Age=0', 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Expires=Thu, 01 Jan 1970 00:00:00 GMT', 'Secure']);
  });
});

describe('expiredSessionCookie', () => {
  it('is the clearing cookie a logout sends', () => {
    vi.stubEnv('INSECURE_COOKIES', '');
    expect(expiredSessionCookie()).toBe(sessionCookie('', 0));
  });
});

describe('readSessionCookie', () => {
  const withCookies = (cookies: string[] | undefined) => ({ cookies }) as APIGatewayProxyEventV2;

  it('finds the session among the cookies API Gateway hands over, keeping any = in its value', () => {
    expect(readSessionCookie(withCookies(['theme=dark', ' store_session=sss_a=b']))).toBe('sss_a=b');
  });

  it('is undefined without cookies, without the session cookie, or with a bare name', () => {
    expect(readSessionCookie(withCookies(undefined))).toBeUndefined();
    expect(readSessionCookie(withCookies(['theme=dark', 'store_sessionx=1']))).toBeUndefined();
    expect(readSessionCookie(withCookies(['store_session']))).toBeUndefined();
  });
});
