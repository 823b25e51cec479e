import { describe, expect, it } from 'vitest';
import { paypalSnapshot } from '#lib/payments/paypal.ts';
import { stripeSnapshot } from '#lib/payments/stripe.ts';
import { shouldCapture } from '#lib/domain/payment.ts';

/**
 * The status mapping of payments-providers.md section 6 for Stripe and PayPal, one row per state
 * each provider documents: what a fetched session or order becomes for the rules.
 */
const ACCOUNT = 'acct_1';

const session = (status: 'open' | 'complete' | 'expired', paymentStatus: 'paid' | 'unpaid', intent: { status: string; charge?: Record<string, unknown> } | null = null) => ({
  id: 'cs_1',
  object: 'checkout.session' as const,
  status,
  payment_status: paymentStatus,
  amount_total: 2550,
  currency: 'brl',
  client_reference_id: 'pay_1',
  url: 'https://checkout.stripe.com/c/pay/cs_1',
  expires_at: 1_800_000_000,
  payment_intent: intent
    ? {
        id: 'pi_1',
        status: intent.status,
        latest_charge: intent.charge
          ? { id: 'ch_1', amount: 2550, amount_refunded: 0, refunded: false, disputed: false, created: 1_795_000_000, status: 'succeeded', ...intent.charge }
          : null,
      }
    : null,
});

describe('Stripe: a Checkout Session as the rules read it', () => {
  it.each([
    ['open', session('open', 'unpaid'), { status: 'PENDING', provider_ref: 'cs_1', dispute: null }],
    ['expired', session('expired', 'unpaid'), { status: 'EXPIRED' }],
    ['complete, unpaid, intent processing (an async method)', session('complete', 'unpaid', { status: 'processing' }), { status: 'PENDING', provider_ref: 'pi_1' }],
    ['complete, unpaid, intent failed', session('complete', 'unpaid', { status: 'requires_payment_method' }), { status: 'FAILED' }],
    ['complete, unpaid, intent canceled', session('complete', 'unpaid', { status: 'canceled' }), { status: 'FAILED' }],
    ['complete and paid', session('complete', 'paid', { status: 'succeeded', charge: {} }), { status: 'PAID', provider_ref: 'pi_1', paid_at: '2026-11-18T11:06:40.000Z' }],
    ['partly refunded', session('complete', 'paid', { status: 'succeeded', charge: { amount_refunded: 1000 } }), { status: 'PAID', refunded_cents: 1000 }],
    ['refunded', session('complete', 'paid', { status: 'succeeded', charge: { amount_refunded: 2550, refunded: true } }), { status: 'REFUNDED', refunded_cents: 2550 }],
  ])('%s', (_case, fetched, expected) => {
    expect(stripeSnapshot(fetched, ACCOUNT, null)).toMatchObject({ reference: 'pay_1', account: ACCOUNT, amount_cents: 2550, currency: 'BRL', ...expected });
  });

  const paid = session('complete', 'paid', { status: 'succeeded', charge: { disputed: true } });
  it.each([
    ['an inquiry (warning_needs_response)', { status: 'warning_needs_response', balance_transactions: [] }, { status: 'PAID', dispute: 'OPEN' }],
    ['an inquiry under review', { status: 'warning_under_review' }, { status: 'PAID', dispute: 'OPEN' }],
    ['an inquiry closed', { status: 'warning_closed' }, { status: 'PAID', dispute: 'WON' }],
    ['a dispute before the funds are withdrawn', { status: 'needs_response', balance_transactions: [] }, { status: 'PAID', dispute: 'OPEN' }],
    ['funds withdrawn (needs_response)', { status: 'needs_response', balance_transactions: [{}] }, { status: 'CHARGEBACK', dispute: 'OPEN' }],
    ['funds withdrawn (under_review)', { status: 'under_review', balance_transactions: [{}] }, { status: 'CHARGEBACK', dispute: 'OPEN' }],
    ['lost', { status: 'lost', balance_transactions: [{}] }, { status: 'PAID', dispute: 'LOST' }],
    ['won (funds reinstated)', { status: 'won', balance_transactions: [{}, {}] }, { status: 'PAID', dispute: 'WON' }],
  ])('dispute: %s', (_case, dispute, expected) => {
    expect(stripeSnapshot(paid, ACCOUNT, { id: 'du_1', ...dispute })).toMatchObject(expected);
  });
});

const order = (status: string, capture: { status: string } | null = null, refunds: string[] = []) => ({
  id: 'ORDER1',
  status,
  purchase_units: [
    {
      custom_id: 'pay_1',
      amount: { currency_code: 'BRL', value: '25.50' },
      ...(capture
        ? {
            payments: {
              captures: [{ id: 'CAPTURE1', status: capture.status, amount: { currency_code: 'BRL', value: '25.50' }, create_time: '2026-11-26T10:00:00Z' }],
              refunds: refunds.map((value) => ({ status: 'COMPLETED', amount: { currency_code: 'BRL', value } })),
            },
          }
        : {}),
    },
  ],
});

describe('PayPal: an order as the rules read it', () => {
  it.each([
    ['CREATED', order('CREATED'), { status: 'PENDING', provider_ref: 'ORDER1' }],
    ['PAYER_ACTION_REQUIRED', order('PAYER_ACTION_REQUIRED'), { status: 'PENDING' }],
    ['APPROVED: capturable by the service', order('APPROVED'), { status: 'PENDING', capturable: true }],
    ['VOIDED', order('VOIDED'), { status: 'CANCELED' }],
    ['captured, COMPLETED', order('COMPLETED', { status: 'COMPLETED' }), { status: 'PAID', provider_ref: 'CAPTURE1', paid_at: '2026-11-26T10:00:00Z' }],
    ['capture PENDING', order('COMPLETED', { status: 'PENDING' }), { status: 'PENDING', paid_at: null }],
    ['capture DECLINED', order('COMPLETED', { status: 'DECLINED' }), { status: 'FAILED' }],
    ['capture FAILED', order('COMPLETED', { status: 'FAILED' }), { status: 'FAILED' }],
    ['capture PARTIALLY_REFUNDED', order('COMPLETED', { status: 'PARTIALLY_REFUNDED' }, ['10.00']), { status: 'PAID', refunded_cents: 1000 }],
    ['capture REFUNDED', order('COMPLETED', { status: 'REFUNDED' }, ['25.50']), { status: 'REFUNDED', refunded_cents: 2550 }],
    ['capture REVERSED (PayPal took the money back)', order('COMPLETED', { status: 'REVERSED' }), { status: 'CHARGEBACK' }],
  ])('%s', (_case, fetched, expected) => {
    const snapshot = paypalSnapshot(fetched, ACCOUNT, null);
    expect(snapshot).toMatchObject({ reference: 'pay_1', account: ACCOUNT, amount_cents: 2550, currency: 'BRL', ...expected });
    if (!('capturable' in expected)) expect(snapshot.capturable).toBeUndefined();
  });

  const captured = order('COMPLETED', { status: 'COMPLETED' });
  it.each([
    ['an inquiry', { status: 'WAITING_FOR_SELLER_RESPONSE', dispute_life_cycle_stage: 'INQUIRY' }, { status: 'PAID', dispute: 'OPEN' }],
    ['a bank chargeback', { status: 'UNDER_REVIEW', dispute_life_cycle_stage: 'CHARGEBACK' }, { status: 'CHARGEBACK', dispute: 'OPEN' }],
    ['resolved for the buyer', { status: 'RESOLVED', dispute_outcome: { outcome_code: 'RESOLVED_BUYER_FAVOUR' } }, { status: 'PAID', dispute: 'LOST' }],
    ['accepted by the seller', { status: 'RESOLVED', dispute_outcome: { outcome_code: 'ACCEPTED' } }, { status: 'PAID', dispute: 'LOST' }],
    ['resolved for the seller', { status: 'RESOLVED', dispute_outcome: { outcome_code: 'RESOLVED_SELLER_FAVOUR' } }, { status: 'PAID', dispute: 'WON' }],
    ['canceled by the buyer', { status: 'RESOLVED', dispute_outcome: { outcome_code: 'CANCELED_BY_BUYER' } }, { status: 'PAID', dispute: 'WON' }],
  ])('dispute: %s', (_case, dispute, expected) => {
    expect(paypalSnapshot(captured, ACCOUNT, { dispute_id: 'PP-D-1', ...dispute })).toMatchObject(expected);
  });
});

describe('shouldCapture: when the service takes an approved PayPal order', () => {
  const now = Date.parse('2026-11-26T10:10:00Z');
  const payment = { id: 'pay_1', amount: 25.5, currency: 'BRL', status: 'PENDING' as const, expires_at: '2026-11-26T10:30:00Z' };
  const approved = paypalSnapshot(order('APPROVED'), ACCOUNT, null);

  it('captures an approved order of this payment while it is live and unexpired', () => {
    expect(shouldCapture(payment, approved, ACCOUNT, now)).toBe(true);
  });

  it.each([
    ['not approved yet', paypalSnapshot(order('PAYER_ACTION_REQUIRED'), ACCOUNT, null), payment, now],
    ['captured already', paypalSnapshot(order('COMPLETED', { status: 'COMPLETED' }), ACCOUNT, null), payment, now],
    ['the payment expired (at its expires_at)', approved, payment, Date.parse('2026-11-26T10:30:00Z')],
    ['the payment no longer live (canceled by a new gateway)', approved, { ...payment, status: 'CANCELED' as const }, now],
    ["another payment's order", { ...approved, reference: 'pay_2' }, payment, now],
    ['another amount', { ...approved, amount_cents: 100 }, payment, now],
    ['another account', approved, payment, now, 'APP-OTHER'],
  ])('not when %s', (_case, snapshot, which, at, account = ACCOUNT) => {
    expect(shouldCapture(which, snapshot, account, at)).toBe(false);
  });
});
