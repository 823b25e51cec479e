import fc from 'fast-check';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { parseStripeSignature, signStripe, STRIPE_SIGNATURE_TOLERANCE_S, verifyStripeNotification } from '#lib/payments/stripe.ts';

/**
 * Our `Stripe-Signature` check against Stripe's own (`webhooks.constructEvent` of the official
 * `stripe` package, a devDependency kept for this test, fed by its `generateTestHeaderString`):
 * both accept what the endpoint secret signs within 5 minutes, future timestamps included (the
 * SDK's tolerance is one-sided), and both refuse tampered bodies, other secrets and old timestamps.
 */
const stripe = new Stripe('sk_test_unused');
const RUNS = 200;
const NOW_S = 1_795_000_000;

const event = (type: string, object: Record<string, unknown>) => JSON.stringify({ id: 'evt_1', object: 'event', type, data: { object } });
const sessionEvent = event('checkout.session.completed', { id: 'cs_test_a1', object: 'checkout.session', payment_status: 'paid' });

const sdkAccepts = (payload: string, header: string, secret: string, receivedAtS: number) => {
  try {
    stripe.webhooks.constructEvent(payload, header, secret, STRIPE_SIGNATURE_TOLERANCE_S, undefined, receivedAtS * 1000);
    return true;
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) return false;
    throw error;
  }
};

const oursAccepts = (payload: string, header: string, secret: string, receivedAtS: number) =>
  verifyStripeNotification({ rawBody: payload, headers: { 'stripe-signature': header }, query: {}, secret, now: receivedAtS * 1000 }).outcome !== 'refused';

const secretArb = fc.stringMatching(/^whsec_[A-Za-z0-9]{8,32}$/);

describe('the Stripe-Signature check', () => {
  it('signs <t>.<raw body> as the SDK does', () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: sessionEvent, secret: 'whsec_one', timestamp: NOW_S });
    expect(parseStripeSignature(header)).toEqual({ t: String(NOW_S), v1: [signStripe('whsec_one', NOW_S, sessionEvent)] });
  });

  it('agrees with constructEvent on random secrets, bodies and ages (within, at and past 300 s; in the future)', () => {
    fc.assert(
      fc.property(secretArb, fc.string({ maxLength: 200 }), fc.integer({ min: -3600, max: 900 }), (secret, text, age) => {
        const payload = event('checkout.session.completed', { id: 'cs_test_x', note: text });
        const header = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: NOW_S - age });
        const sdk = sdkAccepts(payload, header, secret, NOW_S);
        expect(oursAccepts(payload, header, secret, NOW_S)).toBe(sdk);
        expect(sdk).toBe(age <= STRIPE_SIGNATURE_TOLERANCE_S);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses, with the SDK, a tampered body, another secret, and a signature 301 s old', () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: sessionEvent, secret: 'whsec_one', timestamp: NOW_S });
    const tampered = sessionEvent.replace('"paid"', '"unpaid"');
    for (const [payload, secret, at] of [
      [tampered, 'whsec_one', NOW_S],
      [sessionEvent, 'whsec_two', NOW_S],
      [sessionEvent, 'whsec_one', NOW_S + 301],
    ] as const) {
      expect(sdkAccepts(payload, header, secret, at)).toBe(false);
      expect(oursAccepts(payload, header, secret, at)).toBe(false);
    }
    expect(oursAccepts(sessionEvent, header, 'whsec_one', NOW_S + 300)).toBe(true);
  });

  it('accepts either secret while the endpoint secret rolls (two v1 values), as the SDK does', () => {
    const oldV1 = signStripe('whsec_old', NOW_S, sessionEvent);
    const newV1 = signStripe('whsec_new', NOW_S, sessionEvent);
    const header = `t=${NOW_S},v1=${newV1},v1=${oldV1},v0=deadbeef`;
    for (const secret of ['whsec_old', 'whsec_new']) {
      expect(sdkAccepts(sessionEvent, header, secret, NOW_S)).toBe(true);
      expect(oursAccepts(sessionEvent, header, secret, NOW_S)).toBe(true);
    }
    expect(oursAccepts(sessionEvent, header, 'whsec_other', NOW_S)).toBe(false);
  });

  it('accepts a timestamp an hour in the future, as the SDK does (the tolerance is one-sided)', () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: sessionEvent, secret: 'whsec_one', timestamp: NOW_S + 3600 });
    expect(sdkAccepts(sessionEvent, header, 'whsec_one', NOW_S)).toBe(true);
    expect(oursAccepts(sessionEvent, header, 'whsec_one', NOW_S)).toBe(true);
  });

  it('refuses a missing or malformed header and a store with no webhook secret', () => {
    const check = (headers: Record<string, string>, secret: string | null = 'whsec_one') =>
      verifyStripeNotification({ rawBody: sessionEvent, headers, query: {}, secret, now: NOW_S * 1000 }).outcome;
    expect(check({})).toBe('refused');
    expect(check({ 'stripe-signature': 'v1=abc' })).toBe('refused');
    expect(check({ 'stripe-signature': `t=${NOW_S}` })).toBe('refused');
    expect(check({ 'stripe-signature': `t=${NOW_S},v1=${signStripe('whsec_one', NOW_S, sessionEvent)}` }, null)).toBe('refused');
  });
});

describe('what a verified Stripe event names', () => {
  const verified = (payload: string) => {
    const header = `t=${NOW_S},v1=${signStripe('whsec_one', NOW_S, payload)}`;
    return verifyStripeNotification({ rawBody: payload, headers: { 'stripe-signature': header }, query: {}, secret: 'whsec_one', now: NOW_S * 1000 });
  };

  it('the session of the four checkout.session events', () => {
    for (const type of ['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed', 'checkout.session.expired']) {
      expect(verified(event(type, { id: 'cs_test_a1', object: 'checkout.session' }))).toEqual({ outcome: 'verified', refs: ['cs_test_a1'] });
    }
  });

  it('the payment intent of a refund or a dispute event (funds withdrawn and reinstated too)', () => {
    expect(verified(event('charge.refunded', { id: 'ch_1', object: 'charge', payment_intent: 'pi_1' }))).toEqual({ outcome: 'verified', refs: ['pi_1'] });
    for (const type of ['charge.dispute.created', 'charge.dispute.closed', 'charge.dispute.funds_withdrawn', 'charge.dispute.funds_reinstated']) {
      expect(verified(event(type, { id: 'du_1', object: 'dispute', charge: 'ch_1', payment_intent: 'pi_1' }))).toEqual({ outcome: 'verified', refs: ['pi_1'] });
    }
    expect(verified(event('charge.dispute.created', { id: 'du_1', object: 'dispute', charge: 'ch_2', payment_intent: null }))).toEqual({ outcome: 'verified', refs: ['ch_2'] });
  });

  it('nothing for events payments do not use, or ids of the wrong kind', () => {
    expect(verified(event('customer.created', { id: 'cus_1' })).outcome).toBe('ignored');
    expect(verified(event('checkout.session.completed', { id: 'pi_not_a_session' })).outcome).toBe('ignored');
    expect(verified('not json').outcome).toBe('ignored');
  });
});
