import { newPayment, settle, type OrderEffect, type OrderView, type PaymentRecord, type PaymentReport, type SettleDecision } from '#lib/domain/payment.ts';
import type { ChargebackOn, PaymentSource, ProviderSnapshot } from '#lib/schemas/payment.ts';

/** Builders for the payment rules' tests: a payment of 25.50 BRL, the account it was made under, and snapshots of it. */
export const ACCOUNT = '123456789';
export const T0 = Date.parse('2026-11-26T10:00:00.000Z');

export function aPayment(overrides: Partial<PaymentRecord> = {}): PaymentRecord {
  const { payment } = newPayment({ id: 'pay_abc', store_id: 1, order_id: 7, gateway: 'PIX', amount: 25.5, currency: 'BRL', expires_at: null }, T0);
  return { ...payment, ...overrides };
}

export function aSnapshot(overrides: Partial<ProviderSnapshot> = {}): ProviderSnapshot {
  return {
    provider_ref: '1319',
    reference: 'pay_abc',
    account: ACCOUNT,
    amount_cents: 2550,
    currency: 'BRL',
    status: 'PENDING',
    refunded_cents: 0,
    dispute: null,
    paid_at: null,
    ...overrides,
  };
}

export const provider = (overrides: Partial<ProviderSnapshot> = {}): PaymentReport => ({ kind: 'provider', snapshot: aSnapshot(overrides) });

export interface Scene {
  payment: PaymentRecord;
  order: OrderView;
  approvals: number;
  refunds: number;
  chargebacks: number;
  links: number;
  effects: OrderEffect[];
  events: string[];
}

/**
 * What the flow does with a decision, reduced to the order's status and payment: the effects
 * applied as section 4 and 10 would (an approval of a non-PENDING order, or a reversal of a
 * non-APPROVED one, would be a bug of `settle`, so they throw here).
 */
export function applyDecision(scene: Scene, decision: SettleDecision): Scene {
  let { order, approvals, refunds, chargebacks, links } = scene;
  for (const effect of decision.order) {
    if (effect.kind === 'APPROVE') {
      if (order.status !== 'PENDING') throw new Error(`approved a ${order.status} order`);
      order = { status: 'APPROVED', payment_id: effect.payment_id };
      approvals += 1;
    } else if (effect.kind === 'LINK') {
      if (order.status !== 'APPROVED' || order.payment_id !== null) throw new Error('linked an order that has a payment');
      order = { ...order, payment_id: effect.payment_id };
      links += 1;
    } else {
      if (order.status !== 'APPROVED') throw new Error(`${effect.kind} of a ${order.status} order`);
      order = { ...order, status: effect.kind === 'REFUND' ? 'REFUNDED' : 'CHARGEBACK' };
      if (effect.kind === 'REFUND') refunds += 1;
      else chargebacks += 1;
    }
  }
  return {
    payment: decision.payment,
    order,
    approvals,
    refunds,
    chargebacks,
    links,
    effects: [...scene.effects, ...decision.order],
    events: [...scene.events, ...decision.events],
  };
}

export function startScene(order: OrderView, payment = aPayment()): Scene {
  return { payment, order, approvals: 0, refunds: 0, chargebacks: 0, links: 0, effects: [], events: [] };
}

/** Settles each report in turn, as the flows would (each at its own moment, one second apart). */
export function run(scene: Scene, reports: readonly PaymentReport[], options: { chargebackOn?: ChargebackOn; source?: PaymentSource; start?: number } = {}): Scene {
  let at = options.start ?? T0 + 1000;
  for (const report of reports) {
    const decision = settle({
      payment: scene.payment,
      order: scene.order,
      accountId: ACCOUNT,
      chargebackOn: options.chargebackOn ?? 'DISPUTE_OPENED',
      report,
      source: options.source ?? 'NOTIFICATION',
      now: at,
    });
    scene = applyDecision(scene, decision);
    at += 1000;
  }
  return scene;
}
