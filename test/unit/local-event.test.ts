import { describe, expect, it } from 'vitest';
import { buildEvent } from '#infra/local/server.ts';
import { routes } from '#lib/routes/index.ts';

/** The event the local server hands a function must be the one API Gateway (payload 2.0) would. */
const eventFor = (url: string, headers: Record<string, string>, body = '') =>
  buildEvent({ method: 'POST', url: new URL(url), headers, body: Buffer.from(body), sourceIp: '127.0.0.1' }, routes['tag-create'], {});

describe('buildEvent', () => {
  it('passes text and JSON bodies as text, and base64-encodes every other body', () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/xml']) {
      expect(eventFor('http://127.0.0.1/v1/app/tag', { 'content-type': type }, '{"a":1}'), type).toMatchObject({ body: '{"a":1}', isBase64Encoded: false });
    }
    const base64 = Buffer.from('name=x').toString('base64');
    const binary: Record<string, string>[] = [{ 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'application/merge-patch+json' }, {}];
    for (const headers of binary) {
      expect(eventFor('http://127.0.0.1/v1/app/tag', headers, 'name=x'), JSON.stringify(headers)).toMatchObject({ body: base64, isBase64Encoded: true });
    }
  });

  it('moves the Cookie header into `cookies` and joins a repeated query parameter with commas', () => {
    const event = eventFor('http://127.0.0.1/v1/app/tag?status=A&status=B', { cookie: 'a=1; store_session=s' });
    expect(event.cookies).toEqual(['a=1', 'store_session=s']);
    expect(event.headers.cookie).toBeUndefined();
    expect(event.queryStringParameters).toEqual({ status: 'A,B' });
    expect(event.rawQueryString).toBe('status=A&status=B');
  });
});
