import { describe, expect, it } from 'vitest';
import { chargeCreated, settle } from '#lib/domain/payment.ts';
import { paymentStart } from '#lib/domain/payment-checkout.ts';
import { aPayment, aSnapshot, ACCOUNT, T0 } from '../support/payments.ts';

/** The buyer's side of starting a payment (lib/flows/payment-start.ts): which payment answers, and the create call's answer stored. */
const CHARGE = { provider_ref: '1319', pix_code: '00020126...', qr_code: 'iVBORw0KGgo=', checkout_url: null, expires_at: '2026-11-26T10:30:00.000Z' };

describe('chargeCreated', () => {
  it('moves a CREATED payment to PENDING with what the buyer pays with, one CHECKOUT transition and the next revision', () => {
    const payment = chargeCreated(aPayment(), CHARGE, T0 + 500);
    expect(payment).toMatchObject({ status: 'PENDING', provider_ref: '1319', pix_code: CHARGE.pix_code, qr_code: CHARGE.qr_code, expires_at: CHARGE.expires_at, revision: 1 });
    expect(payment.history).toEqual([{ at: new Date(T0 + 500).toISOString(), from: 'CREATED', to: 'PENDING', source: 'CHECKOUT' }]);
    expect(payment.updated_at).toBe(new Date(T0 + 500).toISOString());
  });

  it('never moves a payment back: one settled further while the call was out keeps its status and its provider object', () => {
    const paid = settle({
      payment: { ...aPayment(), status: 'PENDING', provider_ref: '1319' },
      order: { status: 'PENDING', payment_id: null },
      accountId: ACCOUNT,
      chargebackOn: 'DISPUTE_OPENED',
      report: { kind: 'provider', snapshot: aSnapshot({ status: 'PAID', paid_at: new Date(T0).toISOString() }) },
      source: 'NOTIFICATION',
      now: T0 + 100,
    }).payment;
    const after = chargeCreated(paid, { ...CHARGE, provider_ref: 'other' }, T0 + 500);
    expect(after).toMatchObject({ status: 'PAID', provider_ref: '1319', pix_code: CHARGE.pix_code, revision: paid.revision + 1 });
    expect(after.history).toEqual(paid.history);
  });

  it('keeps the expiry the payment was created with when the provider names none', () => {
    expect(chargeCreated(aPayment({ expires_at: '2026-11-26T11:00:00.000Z' }), { ...CHARGE, expires_at: null }, T0).expires_at).toBe('2026-11-26T11:00:00.000Z');
  });
});

describe('paymentStart', () => {
  const pix = aPayment({ id: 'pay_pix', gateway: 'PIX', status: 'PENDING' });
  const test = aPayment({ id: 'pay_test', gateway: 'TEST', provider: 'test', status: 'CREATED' });

  it('a new payment when the order has none', () => {
    expect(paymentStart([], 'PIX')).toEqual({ kind: 'new', replaces: [] });
  });

  it('the live payment of the same gateway (PENDING, or CREATED to be finished) instead of a second one', () => {
    expect(paymentStart([pix], 'PIX')).toEqual({ kind: 'existing', payment: pix });
    expect(paymentStart([pix, test], 'TEST')).toEqual({ kind: 'existing', payment: test });
  });

  it('a new payment replacing the live payments of other gateways; ended payments are neither answered nor replaced', () => {
    const failed = aPayment({ id: 'pay_failed', gateway: 'PIX', status: 'FAILED' });
    const paid = aPayment({ id: 'pay_paid', gateway: 'TEST', status: 'PAID' });
    expect(paymentStart([pix, failed, paid], 'TEST')).toEqual({ kind: 'new', replaces: [pix] });
    expect(paymentStart([failed], 'PIX')).toEqual({ kind: 'new', replaces: [] });
  });
});
