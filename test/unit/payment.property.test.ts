import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PaymentRecord, PaymentReport } from '#lib/domain/payment.ts';
import type { ProviderSnapshot } from '#lib/schemas/payment.ts';
import { aPayment, aSnapshot, run, startScene, type Scene } from '../support/payments.ts';

/**
 * Section 13's promise, as a property: whatever a provider sends, repeats or loses the order of,
 * a payment and its order end as if its reports had come once each, in order, with at most one
 * approval and at most one reversal (refund or chargeback).
 *
 * A provider's reports about one payment are snapshots of one life cycle, each carrying all it
 * knows (the amount refunded so far, the dispute so far). The generator draws such life cycles:
 * pending, then failed / expired / canceled (money may still arrive after an expiry), or paid,
 * then partial refunds, then a full refund or a dispute (opened, then won or lost, or the money
 * taken back); sometimes a state that is not this payment's (rule 2) mixed in.
 */
const RUNS = 400;
const AMOUNT_CENTS = 2550;
const PAID_AT = '2026-11-26T10:00:05.000Z';

const snapshot = (overrides: Partial<ProviderSnapshot>): PaymentReport => ({ kind: 'provider', snapshot: aSnapshot(overrides) });

const lifeCycle: fc.Arbitrary<PaymentReport[]> = fc
  .record({
    pendings: fc.integer({ min: 0, max: 2 }),
    unpaidEnd: fc.constantFrom(null, 'FAILED', 'EXPIRED', 'CANCELED'),
    paid: fc.boolean(),
    partialRefunds: fc.uniqueArray(fc.integer({ min: 1, max: AMOUNT_CENTS - 1 }), { maxLength: 3 }).map((amounts) => amounts.sort((a, b) => a - b)),
    end: fc.constantFrom('none', 'refunded', 'dispute-open', 'dispute-won', 'dispute-lost', 'charged-back'),
    foreign: fc.constantFrom(null, { account: 'someone-else' }, { amount_cents: 1 }, { reference: 'pay_other' }),
  })
  .map(({ pendings, unpaidEnd, paid, partialRefunds, end, foreign }) => {
    const reports: PaymentReport[] = Array.from({ length: pendings }, () => snapshot({ status: 'PENDING' }));
    // A failed or canceled payment takes no money; an expired one may still be paid (rule 1).
    if (unpaidEnd) reports.push(snapshot({ status: unpaidEnd }));
    if (paid && (unpaidEnd === null || unpaidEnd === 'EXPIRED')) {
      const base = { status: 'PAID' as const, paid_at: PAID_AT };
      reports.push(snapshot(base));
      for (const refunded of partialRefunds) reports.push(snapshot({ ...base, refunded_cents: refunded }));
      const refunded = partialRefunds.at(-1) ?? 0;
      const disputed = (dispute: 'OPEN' | 'WON' | 'LOST', status: ProviderSnapshot['status'] = 'PAID') => snapshot({ ...base, refunded_cents: refunded, status, dispute });
      if (end === 'refunded') reports.push(snapshot({ ...base, status: 'REFUNDED', refunded_cents: AMOUNT_CENTS }));
      if (end.startsWith('dispute')) reports.push(disputed('OPEN'));
      if (end === 'dispute-won') reports.push(disputed('WON'));
      if (end === 'dispute-lost') reports.push(disputed('LOST', 'CHARGEBACK'));
      if (end === 'charged-back') reports.push(snapshot({ ...base, refunded_cents: refunded, status: 'CHARGEBACK' }));
    }
    if (foreign) reports.push(snapshot({ status: 'PAID', paid_at: PAID_AT, ...foreign }));
    return reports;
  })
  .filter((reports) => reports.length > 0);

/** The life cycle, then the same reports shuffled, each at least once and some several times. */
const deliveries = lifeCycle.chain((inOrder) =>
  fc
    .array(fc.integer({ min: 0, max: inOrder.length - 1 }), { maxLength: 2 * inOrder.length })
    .chain((repeats) => fc.shuffledSubarray([...inOrder.keys(), ...repeats], { minLength: inOrder.length + repeats.length }))
    .map((indexes) => ({ inOrder, delivered: indexes.map((index) => inOrder[index]!) })),
);

const orders = fc.constantFrom(
  { status: 'PENDING', payment_id: null } as const,
  { status: 'APPROVED', payment_id: null } as const,
  { status: 'APPROVED', payment_id: 'pay_first' } as const,
  { status: 'CANCELED', payment_id: null } as const,
);

/** What must agree: the payment's state, not the bookkeeping of how it got there. */
const outcome = ({ payment, order }: Scene) => {
  const { history: _history, revision: _revision, updated_at: _updated, ...state } = payment as PaymentRecord;
  return { state, order };
};

describe('settling a payment whatever the provider sends', () => {
  it('ends as the in-order sequence does, for any order and duplication, with at most one approval and one reversal', () => {
    fc.assert(
      fc.property(
        deliveries,
        orders,
        fc.constantFrom('DISPUTE_OPENED', 'DISPUTE_LOST'),
        fc.constantFrom('PIX', 'MERCADOPAGO'),
        ({ inOrder, delivered }, order, chargebackOn, gateway) => {
          const payment = aPayment({ gateway });
          const expected = run(startScene(order, payment), inOrder, { chargebackOn });
          const actual = run(startScene(order, payment), delivered, { chargebackOn });
          expect(outcome(actual)).toEqual(outcome(expected));
          expect(actual.approvals).toBeLessThanOrEqual(1);
          expect(actual.refunds + actual.chargebacks).toBeLessThanOrEqual(1);
          expect([actual.approvals, actual.links, actual.refunds, actual.chargebacks]).toEqual([expected.approvals, expected.links, expected.refunds, expected.chargebacks]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('settling a report twice in a row changes nothing the second time', () => {
    fc.assert(
      fc.property(lifeCycle, orders, (reports, order) => {
        const once = run(startScene(order), reports);
        const twice = run(
          startScene(order),
          reports.flatMap((report) => [report, report]),
        );
        expect(twice.payment.revision).toBe(once.payment.revision);
        expect(twice.events).toEqual(once.events);
        expect(twice.effects).toEqual(once.effects);
      }),
      { numRuns: RUNS },
    );
  });
});
