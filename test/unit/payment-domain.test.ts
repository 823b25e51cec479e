import { describe, expect, it } from 'vitest';
import {
  bindingMismatch,
  chargeCreated,
  checkoutAbandoned,
  HISTORY_MAX,
  newPayment,
  paymentEventsOf,
  pixExpiresAt,
  pollMayAskProvider,
  settle,
  type PaymentReport,
} from '#lib/domain/payment.ts';
import { ACCOUNT, aPayment, aSnapshot, provider, run, startScene, T0 } from '../support/payments.ts';

const PENDING_ORDER = { status: 'PENDING', payment_id: null } as const;
const paid = (overrides = {}) => provider({ status: 'PAID', paid_at: '2026-11-26T10:00:05.000Z', ...overrides });

describe('rule 1: a payment only moves forward', () => {
  it('ignores an older report after a newer one, and records each move with its source', () => {
    const scene = run(startScene(PENDING_ORDER), [provider(), paid(), provider({ status: 'PENDING' })]);
    expect(scene.payment.status).toBe('PAID');
    expect(scene.payment.history.map(({ from, to, source }) => [from, to, source])).toEqual([
      ['CREATED', 'PENDING', 'NOTIFICATION'],
      ['PENDING', 'PAID', 'NOTIFICATION'],
    ]);
  });

  it('takes money that arrives after expiry or cancel: still PAID', () => {
    expect(run(startScene(PENDING_ORDER), [provider({ status: 'EXPIRED' }), paid()]).payment.status).toBe('PAID');
    expect(run(startScene(PENDING_ORDER), [{ kind: 'recorded', status: 'CANCELED' }, paid()]).payment.status).toBe('PAID');
  });

  it('keeps the first of equal ranks: FAILED is not turned into CANCELED, REFUNDED not into CHARGEBACK', () => {
    expect(run(startScene(PENDING_ORDER), [provider({ status: 'FAILED' }), provider({ status: 'CANCELED' })]).payment.status).toBe('FAILED');
    const refunded = run(startScene(PENDING_ORDER), [paid(), provider({ status: 'REFUNDED', refunded_cents: 2550 }), provider({ status: 'CHARGEBACK' })]);
    expect(refunded.payment.status).toBe('REFUNDED');
    expect(refunded.order.status).toBe('REFUNDED');
    expect(refunded.chargebacks).toBe(0);
  });

  it('answers the same object, unchanged and with no event, for a report that moves nothing', () => {
    const scene = run(startScene(PENDING_ORDER), [paid()]);
    const decision = settle({ payment: scene.payment, order: scene.order, accountId: ACCOUNT, chargebackOn: 'DISPUTE_OPENED', report: paid(), source: 'POLL', now: T0 + 60_000 });
    expect(decision).toEqual({ payment: scene.payment, changed: false, order: [], cancelAtProvider: false, events: [] });
    expect(decision.payment).toBe(scene.payment);
  });

  it('raises the revision with every change and keeps the last 20 transitions', () => {
    const old = Array.from({ length: HISTORY_MAX }, () => ({ at: '2026-11-26T09:00:00.000Z', from: 'CREATED' as const, to: 'CREATED' as const, source: 'SYNC' as const }));
    const scene = run(startScene(PENDING_ORDER, aPayment({ history: old, revision: 4 })), [provider()], { source: 'RECONCILER' });
    expect(scene.payment.revision).toBe(5);
    expect(scene.payment.history).toHaveLength(HISTORY_MAX);
    expect(scene.payment.history.at(-1)).toEqual({ at: new Date(T0 + 1000).toISOString(), from: 'CREATED', to: 'PENDING', source: 'RECONCILER' });
  });
});

describe('rule 2: only a state bound to this payment is acted on', () => {
  it.each([
    ['reference', { reference: 'pay_other' }],
    ['reference', { reference: null }],
    ['amount', { amount_cents: 2549 }],
    ['currency', { currency: 'USD' }],
    ['account', { account: '999' }],
    ['account', { account: null }],
  ] as const)('a different %s: MISMATCH, nothing else changes', (part, overrides) => {
    const scene = run(startScene(PENDING_ORDER), [provider(), paid(overrides)]);
    expect(scene.payment).toMatchObject({ status: 'PENDING', attention: 'MISMATCH', mismatch: part, paid_at: null });
    expect(scene.order).toEqual(PENDING_ORDER);
    expect(scene.effects).toEqual([]);
    expect(scene.events).toEqual(['payment.attention']);
  });

  it('flags a mismatch once: the same mismatch again is no change and no event', () => {
    const scene = run(startScene(PENDING_ORDER), [paid({ amount_cents: 1 }), paid({ amount_cents: 1 })]);
    expect(scene.events).toEqual(['payment.attention']);
    expect(scene.payment.revision).toBe(1);
  });

  it('refuses every state when the store has no configured account', () => {
    expect(bindingMismatch(aPayment(), aSnapshot(), null)).toBe('account');
    expect(bindingMismatch(aPayment(), aSnapshot({ currency: 'brl' }), ACCOUNT)).toBeNull();
  });

  it('keeps MISMATCH until looked at, even when a bound state comes later', () => {
    const scene = run(startScene(PENDING_ORDER), [paid({ account: '1' }), paid()]);
    expect(scene.payment).toMatchObject({ status: 'PAID', attention: 'MISMATCH' });
    expect(scene.approvals).toBe(1);
  });
});

describe('rule 3: paid with the order PENDING approves it, once', () => {
  it('approves with the payment, its gateway and the provider time of payment', () => {
    const scene = run(startScene(PENDING_ORDER), [provider(), paid(), paid(), paid()]);
    expect(scene.effects).toEqual([{ kind: 'APPROVE', payment_id: 'pay_abc', gateway: 'PIX', paid_at: '2026-11-26T10:00:05.000Z' }]);
    expect(scene.order).toEqual({ status: 'APPROVED', payment_id: 'pay_abc' });
    expect(scene.payment).toMatchObject({ status: 'PAID', order_role: 'ORDER', attention: null, charge_ref: '1319' });
  });

  it('takes the time of settling when the provider gives none', () => {
    const scene = run(startScene(PENDING_ORDER), [paid({ paid_at: null })]);
    expect(scene.payment.paid_at).toBe(new Date(T0 + 1000).toISOString());
  });
});

describe('rule 4: paid when the order is not PENDING leaves the order untouched', () => {
  it('links a payment to an order approved by hand with no payment', () => {
    const scene = run(startScene({ status: 'APPROVED', payment_id: null }), [paid()]);
    expect(scene.effects).toEqual([{ kind: 'LINK', payment_id: 'pay_abc', gateway: 'PIX', paid_at: '2026-11-26T10:00:05.000Z' }]);
    expect(scene.payment).toMatchObject({ status: 'PAID', attention: null, order_role: 'ORDER' });
  });

  it.each([[{ status: 'APPROVED', payment_id: 'pay_first' }], [{ status: 'REFUNDED', payment_id: 'pay_first' }], [{ status: 'CHARGEBACK', payment_id: null }]] as const)(
    'flags DUPLICATE when the order was already paid, refunded or charged back: %j',
    (order) => {
      const scene = run(startScene(order), [paid()]);
      expect(scene.payment).toMatchObject({ status: 'PAID', attention: 'DUPLICATE' });
      expect(scene.order).toEqual(order);
      expect(scene.events).toEqual(['payment.attention']);
    },
  );

  it('flags UNFULFILLED when the order was canceled, and clears it once the money went back, touching no order', () => {
    const order = { status: 'CANCELED', payment_id: null } as const;
    const scene = run(startScene(order), [paid(), provider({ status: 'REFUNDED', refunded_cents: 2550 })]);
    expect(scene.payment).toMatchObject({ status: 'REFUNDED', attention: null, order_role: 'UNFULFILLED' });
    expect(scene.order).toEqual(order);
    expect(scene.effects).toEqual([]);
  });
});

describe('rule 5: refunds', () => {
  it('refunds the order this payment paid, once', () => {
    const refunded = provider({ status: 'REFUNDED', refunded_cents: 2550 });
    const scene = run(startScene(PENDING_ORDER), [paid(), refunded, refunded]);
    expect(scene.effects.map((effect) => effect.kind)).toEqual(['APPROVE', 'REFUND']);
    expect(scene.order.status).toBe('REFUNDED');
    expect(scene.payment).toMatchObject({ status: 'REFUNDED', refunded_amount: 25.5 });
  });

  it('records a partial refund with PARTIAL_REFUND, then the full one refunds the order', () => {
    const partly = run(startScene(PENDING_ORDER), [paid(), paid({ refunded_cents: 1000 })]);
    expect(partly.payment).toMatchObject({ status: 'PAID', refunded_amount: 10, attention: 'PARTIAL_REFUND' });
    expect(partly.order.status).toBe('APPROVED');
    const full = run(partly, [paid({ refunded_cents: 2550 })]);
    expect(full.payment).toMatchObject({ status: 'REFUNDED', attention: null });
    expect(full.refunds).toBe(1);
  });

  it('a refund seen before the payment was: approves and refunds in one decision, as in order', () => {
    const scene = run(startScene(PENDING_ORDER), [provider({ status: 'REFUNDED', refunded_cents: 0 })]);
    expect(scene.effects.map((effect) => effect.kind)).toEqual(['APPROVE', 'REFUND']);
    expect(scene.payment).toMatchObject({ status: 'REFUNDED', refunded_amount: 25.5 });
    expect(scene.order.status).toBe('REFUNDED');
  });

  it("the operator's refund recorded without the provider refunds the order through the same rule", () => {
    const scene = run(startScene(PENDING_ORDER), [paid()]);
    const after = run(scene, [{ kind: 'recorded', status: 'REFUNDED' }], { source: 'OPERATOR' });
    expect(after.effects.map((effect) => effect.kind)).toEqual(['APPROVE', 'REFUND']);
    expect(after.payment.history.at(-1)).toMatchObject({ from: 'PAID', to: 'REFUNDED', source: 'OPERATOR' });
  });

  it('a refund recorded on a payment never seen paid changes nothing (it would approve the order)', () => {
    const scene = run(startScene(PENDING_ORDER), [provider(), { kind: 'recorded', status: 'REFUNDED' }], { source: 'OPERATOR' });
    expect(scene.payment.status).toBe('PENDING');
    expect(scene.effects).toEqual([]);
  });

  it('a refunded duplicate touches no order', () => {
    const order = { status: 'APPROVED', payment_id: 'pay_first' } as const;
    const scene = run(startScene(order), [paid(), provider({ status: 'REFUNDED', refunded_cents: 2550 })]);
    expect(scene.effects).toEqual([]);
    expect(scene.payment).toMatchObject({ status: 'REFUNDED', attention: null });
  });
});

describe('rule 6: disputes and chargebacks', () => {
  it('DISPUTE_OPENED: the order is charged back when the dispute opens; a won dispute then sets DISPUTE_WON', () => {
    const scene = run(startScene(PENDING_ORDER), [paid(), paid({ dispute: 'OPEN' })], { chargebackOn: 'DISPUTE_OPENED' });
    expect(scene.effects.map((effect) => effect.kind)).toEqual(['APPROVE', 'CHARGEBACK']);
    expect(scene.payment.status).toBe('CHARGEBACK');
    const won = run(scene, [paid({ dispute: 'WON' })], { chargebackOn: 'DISPUTE_OPENED' });
    expect(won.payment).toMatchObject({ status: 'CHARGEBACK', attention: 'DISPUTE_WON' });
    expect(won.order.status).toBe('CHARGEBACK');
    expect(won.chargebacks).toBe(1);
  });

  it('DISPUTE_LOST: an opened dispute only flags DISPUTE_OPEN; the chargeback comes when it is lost', () => {
    const open = run(startScene(PENDING_ORDER), [paid(), paid({ dispute: 'OPEN' })], { chargebackOn: 'DISPUTE_LOST' });
    expect(open.payment).toMatchObject({ status: 'PAID', attention: 'DISPUTE_OPEN' });
    expect(open.order.status).toBe('APPROVED');
    const lost = run(open, [paid({ dispute: 'LOST' })], { chargebackOn: 'DISPUTE_LOST' });
    expect(lost.payment).toMatchObject({ status: 'CHARGEBACK', attention: null });
    expect(lost.order.status).toBe('CHARGEBACK');
  });

  it('DISPUTE_LOST: a dispute won before any chargeback clears the flag and keeps the order', () => {
    const scene = run(startScene(PENDING_ORDER), [paid(), paid({ dispute: 'OPEN' }), paid({ dispute: 'WON' })], { chargebackOn: 'DISPUTE_LOST' });
    expect(scene.payment).toMatchObject({ status: 'PAID', attention: null, dispute: 'WON' });
    expect(scene.order.status).toBe('APPROVED');
  });

  it.each(['DISPUTE_OPENED', 'DISPUTE_LOST'] as const)('%s: money taken back (charged_back) charges the order back', (chargebackOn) => {
    const scene = run(startScene(PENDING_ORDER), [paid(), provider({ status: 'CHARGEBACK' })], { chargebackOn });
    expect(scene.order.status).toBe('CHARGEBACK');
    expect(scene.chargebacks).toBe(1);
  });

  it('a chargeback after the order was refunded is recorded on the payment only', () => {
    const order = { status: 'REFUNDED', payment_id: 'pay_abc' } as const;
    const scene = run(startScene(order, aPayment({ status: 'PAID', order_role: 'ORDER' })), [provider({ status: 'CHARGEBACK' })]);
    expect(scene.payment.status).toBe('CHARGEBACK');
    expect(scene.effects).toEqual([]);
  });
});

describe('rule 7: expiry', () => {
  const expiring = aPayment({ status: 'PENDING', expires_at: '2026-11-26T10:30:00.000Z' });
  const at = (iso: string, report: PaymentReport) =>
    settle({ payment: expiring, order: PENDING_ORDER, accountId: ACCOUNT, chargebackOn: 'DISPUTE_OPENED', report, source: 'RECONCILER', now: Date.parse(iso) });

  it('expires a live payment past its expiry, by the clock alone or with the provider still pending', () => {
    for (const report of [{ kind: 'clock' } as const, provider()]) {
      const decision = at('2026-11-26T10:30:00.000Z', report);
      expect(decision).toMatchObject({ changed: true, cancelAtProvider: true, events: ['payment.expired'], order: [] });
      expect(decision.payment.status).toBe('EXPIRED');
    }
  });

  it('keeps it before its expiry, and takes the money of one paid past it', () => {
    expect(at('2026-11-26T10:29:59.999Z', { kind: 'clock' }).changed).toBe(false);
    const late = at('2026-11-26T11:00:00.000Z', paid());
    expect(late.payment.status).toBe('PAID');
    expect(late.cancelAtProvider).toBe(false);
    expect(late.order.map((effect) => effect.kind)).toEqual(['APPROVE']);
  });

  it('cancels a checkout order 30 minutes on only when no payment of it is alive', () => {
    const order = { status: 'PENDING' as const, created_at: '2026-11-26T10:00:00.000Z' };
    const after = Date.parse('2026-11-26T10:30:00.000Z');
    expect(checkoutAbandoned(order, [{ status: 'EXPIRED' }, { status: 'FAILED' }], after)).toBe(true);
    expect(checkoutAbandoned(order, [], after)).toBe(true);
    expect(checkoutAbandoned(order, [{ status: 'EXPIRED' }, { status: 'PENDING' }], after)).toBe(false);
    expect(checkoutAbandoned(order, [], after - 1)).toBe(false);
    expect(checkoutAbandoned({ ...order, status: 'APPROVED' }, [], after)).toBe(false);
  });

  it('dates a PIX charge from its minutes', () => {
    expect(pixExpiresAt(T0, 30)).toBe('2026-11-26T10:30:00.000Z');
  });
});

describe('a checkout that takes several attempts (Checkout Pro)', () => {
  const preference = () => aPayment({ gateway: 'MERCADOPAGO', provider: 'mercadopago', status: 'PENDING', expires_at: '2026-11-26T10:30:00.000Z' });

  it('a refused card does not fail it: still live, no payment.failed; the next card pays it', () => {
    const refused = run(startScene(PENDING_ORDER, preference()), [provider({ status: 'FAILED', provider_ref: '501' })]);
    expect(refused.payment.status).toBe('PENDING');
    expect(refused.events).toEqual([]);
    const paid = run(refused, [provider({ status: 'PAID', provider_ref: '502' })]);
    expect(paid.payment).toMatchObject({ status: 'PAID', charge_ref: '502' });
    expect(paid.approvals).toBe(1);
  });

  it('it ends by expiring, as any live payment', () => {
    const scene = run(startScene(PENDING_ORDER, preference()), [provider({ status: 'FAILED' })], { start: Date.parse('2026-11-26T10:30:00.000Z') });
    expect(scene.payment.status).toBe('EXPIRED');
    expect(scene.events).toEqual(['payment.expired']);
  });
});

describe('events and the other helpers', () => {
  it('a new payment is CREATED, no event before the provider made the charge; the charge is payment.created; a refusal is payment.failed', () => {
    const { payment } = newPayment({ id: 'pay_x', store_id: 1, order_id: 2, gateway: 'MERCADOPAGO', amount: 10, currency: 'brl', expires_at: null }, T0);
    expect(payment).toMatchObject({ status: 'CREATED', provider: 'mercadopago', currency: 'BRL', revision: 0 });
    expect(paymentEventsOf(undefined, payment)).toEqual([]);
    const charge = { provider_ref: 'pref-1', pix_code: null, qr_code: null, checkout_url: 'https://mp.example/pref-1', expires_at: null };
    const charged = chargeCreated(payment, charge, T0);
    expect(paymentEventsOf(payment, charged)).toEqual(['payment.created']);
    // The create call's answer stored again (a retried request) is no second event.
    expect(paymentEventsOf(charged, chargeCreated(charged, charge, T0 + 1000))).toEqual([]);
    expect(run(startScene(PENDING_ORDER), [provider({ status: 'FAILED' })]).events).toEqual(['payment.failed']);
  });

  it('the poll asks the provider at most once per 10 seconds, and only for a live payment', () => {
    expect(pollMayAskProvider('PENDING', null, T0)).toBe(true);
    expect(pollMayAskProvider('PENDING', new Date(T0 - 9_999).toISOString(), T0)).toBe(false);
    expect(pollMayAskProvider('PENDING', new Date(T0 - 10_000).toISOString(), T0)).toBe(true);
    expect(pollMayAskProvider('PAID', null, T0)).toBe(false);
  });
});
