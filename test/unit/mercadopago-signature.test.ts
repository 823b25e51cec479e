import fc from 'fast-check';
import { InvalidWebhookSignatureError, WebhookSignatureValidator } from 'mercadopago';
import { describe, expect, it } from 'vitest';
import { mercadoPagoManifest, signMercadoPago, verifyMercadoPagoNotification } from '#lib/payments/mercadopago.ts';

/**
 * Our `x-signature` check against Mercado Pago's own verifier (`WebhookSignatureValidator` of the
 * official SDK, a devDependency kept for this test): for any id, request id, timestamp and
 * secret, both accept what the documented manifest signs and both refuse the same forgeries.
 */
const RUNS = 300;

const sdkAccepts = (options: { xSignature: string; xRequestId: string | undefined; dataId: string | undefined; secret: string }) => {
  try {
    WebhookSignatureValidator.validate(options);
    return true;
  } catch (error) {
    if (error instanceof InvalidWebhookSignatureError) return false;
    throw error;
  }
};

const oursAccepts = (options: { xSignature: string; xRequestId: string | undefined; dataId: string | undefined; secret: string }) =>
  verifyMercadoPagoNotification({
    rawBody: JSON.stringify({ type: 'payment', data: { id: options.dataId ?? '1' } }),
    headers: { 'x-signature': options.xSignature, 'x-request-id': options.xRequestId },
    query: options.dataId === undefined ? { type: 'payment' } : { 'data.id': options.dataId, type: 'payment' },
    secret: options.secret,
    now: 0,
  }).outcome !== 'refused';

const token = fc.stringMatching(/^[a-z0-9-]{1,40}$/);
const numericId = fc.integer({ min: 1, max: 2 ** 40 }).map(String);

describe('the Mercado Pago x-signature check', () => {
  it('builds the documented manifest: absent parts left out, the trailing semicolon kept', () => {
    expect(mercadoPagoManifest('123', 'req-1', '1704908010')).toBe('id:123;request-id:req-1;ts:1704908010;');
    expect(mercadoPagoManifest(undefined, 'req-1', '1704908010')).toBe('request-id:req-1;ts:1704908010;');
    expect(mercadoPagoManifest('123', undefined, '1704908010')).toBe('id:123;ts:1704908010;');
  });

  it('accepts what the SDK accepts, for any id, request id, ts and secret (parts sometimes absent)', () => {
    fc.assert(
      fc.property(
        fc.option(numericId, { nil: undefined }),
        fc.option(token, { nil: undefined }),
        fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }),
        token,
        (dataId, requestId, ts, secret) => {
          const xSignature = `ts=${ts},v1=${signMercadoPago(secret, mercadoPagoManifest(dataId, requestId, String(ts)))}`;
          const options = { xSignature, xRequestId: requestId, dataId, secret };
          expect(sdkAccepts(options)).toBe(true);
          expect(oursAccepts(options)).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('refuses what the SDK refuses: another id, request id, ts or secret, a changed hash, a malformed header', () => {
    fc.assert(
      fc.property(numericId, token, fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }), token, fc.integer({ min: 0, max: 5 }), (dataId, requestId, ts, secret, forgery) => {
        const signed = signMercadoPago(secret, mercadoPagoManifest(dataId, requestId, String(ts)));
        const forged = [
          { xSignature: `ts=${ts},v1=${signed}`, xRequestId: requestId, dataId: `${dataId}1`, secret },
          { xSignature: `ts=${ts},v1=${signed}`, xRequestId: `${requestId}x`, dataId, secret },
          { xSignature: `ts=${ts + 1},v1=${signed}`, xRequestId: requestId, dataId, secret },
          { xSignature: `ts=${ts},v1=${signed}`, xRequestId: requestId, dataId, secret: `${secret}x` },
          { xSignature: `ts=${ts},v1=${signed.slice(0, -1)}${signed.endsWith('0') ? '1' : '0'}`, xRequestId: requestId, dataId, secret },
          { xSignature: `v1=${signed}`, xRequestId: requestId, dataId, secret },
        ][forgery]!;
        expect(sdkAccepts(forged)).toBe(false);
        expect(oursAccepts(forged)).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it('ignores a signed notification of another topic, and needs no secret to read a hint', () => {
    const secret = 'whsec';
    const xSignature = `ts=1,v1=${signMercadoPago(secret, mercadoPagoManifest('9', 'r', '1'))}`;
    const headers = { 'x-signature': xSignature, 'x-request-id': 'r' };
    expect(verifyMercadoPagoNotification({ rawBody: '{"type":"topic_chargebacks_wh"}', headers, query: { 'data.id': '9', type: 'topic_chargebacks_wh' }, secret, now: 0 })).toEqual(
      { outcome: 'ignored' },
    );
    expect(verifyMercadoPagoNotification({ rawBody: 'not json', headers: {}, query: { 'data.id': '9', type: 'payment' }, secret: null, now: 0 })).toEqual({
      outcome: 'hint',
      refs: ['9'],
    });
    // Signed with no id in the query: the body's id was signed by nobody, so it is only a hint.
    const noId = `ts=1,v1=${signMercadoPago(secret, mercadoPagoManifest(undefined, 'r', '1'))}`;
    expect(
      verifyMercadoPagoNotification({ rawBody: '{"type":"payment","data":{"id":"77"}}', headers: { 'x-signature': noId, 'x-request-id': 'r' }, query: {}, secret, now: 0 }),
    ).toEqual({ outcome: 'hint', refs: ['77'] });
    // Signed with the query's id: only that id is trusted to be fetched, not another one in the body.
    expect(verifyMercadoPagoNotification({ rawBody: '{"type":"payment","data":{"id":"78"}}', headers, query: { 'data.id': '9' }, secret, now: 0 })).toEqual({
      outcome: 'verified',
      refs: ['9'],
    });
    // An id that could not be a payment id is never passed on to a fetch.
    expect(verifyMercadoPagoNotification({ rawBody: '{}', headers: {}, query: { 'data.id': '../users/me', type: 'payment' }, secret: null, now: 0 })).toEqual({
      outcome: 'ignored',
    });
  });
});
