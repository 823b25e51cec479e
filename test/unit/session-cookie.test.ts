import { afterEach, describe, expect, it, vi } from 'vitest';

vi.mock('#lib/db/client.ts', () => ({ db: { send: vi.fn() }, TABLE: 'unit-table' }));
const { sessionCookie } = await import('#lib/flows/auth.ts');

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
    expect(sessionCookie('', 0).split('; ')).toEqual([
      'store_session=', 'Max-Age=0', 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Expires=Thu, 01 Jan 1970 00:00:00 GMT', 'Secure',
    ]);
  });
});
