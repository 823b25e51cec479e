import { describe, expect, it } from 'vitest';
import { loggedPath } from '#infra/local/server.ts';
import { HttpError } from '#lib/errors.ts';
import { lowerCaseHeaders, rawBody } from '#lib/http/raw-body.ts';

describe('rawBody: a signed body as the caller sent it', () => {
  const body = '{"type":"payment","data":{"id":"tst_é"}}';

  it('reads a text body as is, and a base64-encoded one (API Gateway, a non-text media type) decoded byte for byte', () => {
    expect(rawBody({ body, isBase64Encoded: false }, 1024)).toBe(body);
    expect(rawBody({ body: Buffer.from(body, 'utf8').toString('base64'), isBase64Encoded: true }, 1024)).toBe(body);
    expect(rawBody({ body: undefined, isBase64Encoded: false }, 1024)).toBe('');
  });

  it('counts bytes, not characters: one byte over the bound is 413', () => {
    const bytes = Buffer.byteLength(body, 'utf8');
    expect(rawBody({ body, isBase64Encoded: false }, bytes)).toBe(body);
    const refusal = (() => {
      try {
        rawBody({ body, isBase64Encoded: false }, bytes - 1);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(HttpError);
    expect((refusal as HttpError).status).toBe(413);
  });

  it('lower-cases header names', () => {
    expect(lowerCaseHeaders({ 'X-Signature': 'ts=1,v1=ab' })).toEqual({ 'x-signature': 'ts=1,v1=ab' });
  });
});

describe("the local server's access line", () => {
  it('hides a notify key, and only that', () => {
    expect(loggedPath('/v1/payment/notify/mercadopago/AbC_123-xyz')).toBe('/v1/payment/notify/mercadopago/***');
    expect(loggedPath('/v1/app/order/7')).toBe('/v1/app/order/7');
  });
});
