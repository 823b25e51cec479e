import type { OrderStatus } from '#lib/schemas/order.ts';
import type { ChargebackOn, DisputeStage, Gateway, PaymentAttention, PaymentSource, PaymentStatus, ProviderSnapshot } from '#lib/schemas/payment.ts';
import { GATEWAY_PROVIDER } from '#lib/schemas/payment.ts';
import type { BindingPart, OrderRole, PaymentRecord } from '#lib/schemas/payment.ts';

export type { BindingPart, OrderRole, PaymentRecord };

/*
 * The rules of a payment (extensions section 13), pure: no I/O, the time a parameter.
 *
 * Every source (the checkout's create call, a notification, the buyer's poll, the operator's sync
 * or refund, the reconciler) ends in one call of `settle`: the payment and the order as read, what
 * was learned (a fetched provider snapshot, something we recorded ourselves, or only the clock),
 * and `now`. It answers the payment as it must be stored, the order effects to apply in the same
 * transaction (approve, link, refund, chargeback) and the events to emit. A flow writes that
 * decision with a condition on the payment's `revision` as read; losing that race means re-reading
 * and settling again, which is why `settle` must give the same answer for the same inputs.
 *
 * Why the result does not depend on the order or the number of reports: the payment's progress is
 * a join of monotone parts (the status by rank, the amount refunded by max, the dispute by stage),
 * so each report can only move it forward, a repeated report moves nothing, and two reports give
 * the same progress in either order. The order effects fire on crossings of that progress (first
 * time paid, first time refunded or charged back), which therefore happen at most once. One
 * consequence, chosen for that property: a payment first seen already REFUNDED (or charged back)
 * was paid, so with its order PENDING it approves the order and refunds it in the same decision,
 * exactly as if the PAID report had not been lost; the order ends as it would in order.
 */

/** Rule 1: `CREATED` < `PENDING` < `FAILED`, `EXPIRED`, `CANCELED` < `PAID` < `REFUNDED`, `CHARGEBACK`. */
export const STATUS_RANK: Record<PaymentStatus, number> = {
  CREATED: 0,
  PENDING: 1,
  FAILED: 2,
  EXPIRED: 2,
  CANCELED: 2,
  PAID: 3,
  REFUNDED: 4,
  CHARGEBACK: 4,
};
const PAID_RANK = STATUS_RANK.PAID;

/** A status only moves to a higher rank; among equals the first one reached stays. */
export const advances = (from: PaymentStatus, to: PaymentStatus) => STATUS_RANK[to] > STATUS_RANK[from];

/** Live: money may still arrive through it by the normal path (CREATED or PENDING). */
export const isLive = (status: PaymentStatus) => STATUS_RANK[status] < STATUS_RANK.FAILED;
export const wasPaid = (status: PaymentStatus) => STATUS_RANK[status] >= PAID_RANK;
/** The payment that paid its order (not a DUPLICATE or UNFULFILLED one): refunded through the order's refund. */
export const paidItsOrder = (payment: Pick<PaymentRecord, 'order_role'>) => payment.order_role === 'ORDER';

/**
 * Checkouts where the buyer may try again after a refused attempt, each attempt a provider payment
 * of its own (a Checkout Pro preference: "a rejected card and then an approved one").
 */
const RETRYABLE_CHECKOUTS: ReadonlySet<Gateway> = new Set(['MERCADOPAGO']);

export const HISTORY_MAX = 20;

/** What `settle` needs of the order: its status and the payment that paid it (null if none, or approved by hand). */
export interface OrderView {
  status: OrderStatus;
  payment_id: string | null;
}

/** What was learned, and from whom. */
export type PaymentReport =
  /** A provider's state, fetched (or answered by our own create, refund or cancel call). Bound before use (rule 2). */
  | { kind: 'provider'; snapshot: ProviderSnapshot }
  /**
   * Something we did ourselves and trust without a fetch: CANCELED (a new gateway replaced it, or the
   * order was canceled), REFUNDED (the operator's refund recorded without the provider: `at_provider: false`).
   */
  | { kind: 'recorded'; status: 'CANCELED' | 'REFUNDED' }
  /** Nothing fetched (the reconciler with the provider down): only the time may move the payment (rule 7). */
  | { kind: 'clock' };

export type OrderEffect =
  /** Rule 3: the section 4 approval, carrying the payment, in one transaction with the payment. */
  | { kind: 'APPROVE'; payment_id: string; gateway: Gateway; paid_at: string }
  /** Rule 4: an order approved by hand with no payment gets this one as its payment; nothing else. */
  | { kind: 'LINK'; payment_id: string; gateway: Gateway; paid_at: string }
  /** Rules 5 and 6: the section 10 reversal of the order this payment paid. */
  | { kind: 'REFUND' }
  | { kind: 'CHARGEBACK' };

export type PaymentEvent = 'payment.created' | 'payment.failed' | 'payment.expired' | 'payment.attention';

/** What `paymentEventsOf` reads of a payment (its stored item, or a PaymentRecord). */
export interface PaymentEventImage {
  status?: unknown;
  attention?: unknown;
  provider_ref?: unknown;
}

const charged = (image: PaymentEventImage | undefined) => image?.provider_ref !== undefined && image.provider_ref !== null;

/**
 * The events of a payment's change (section 13), from its images before and after: created when
 * the provider has made the charge (the payment gains its provider object, and with it the
 * `pix_code`, `qr_code`, `checkout_url` and `expires_at` the buyer pays with, which a store's
 * receiver wants: to send the PIX code by e-mail, to follow up an abandoned checkout), not when the
 * payment is first written CREATED before the provider call, with nothing to pay with yet, nor
 * for a payment the provider refused; failed / expired when the status crosses into FAILED /
 * EXPIRED; attention when the flag becomes non-null or changes to another (cleared is no event).
 * A repeated write with the same status, flag and provider object is none, so each crossing is
 * sent once. `settle` answers these, and the webhook router draws them from the table's stream
 * with this same function.
 */
export function paymentEventsOf(before: PaymentEventImage | undefined, after: PaymentEventImage): PaymentEvent[] {
  const events: PaymentEvent[] = [];
  if (charged(after) && !charged(before)) events.push('payment.created');
  if (!before) return events;
  if (before.status !== after.status && after.status === 'FAILED') events.push('payment.failed');
  if (before.status !== after.status && after.status === 'EXPIRED') events.push('payment.expired');
  const attention = after.attention ?? null;
  if (attention !== null && attention !== (before.attention ?? null)) events.push('payment.attention');
  return events;
}

export interface SettleInput {
  payment: PaymentRecord;
  order: OrderView;
  /** The account of the store's provider configuration (checked by the credential call). */
  accountId: string | null;
  chargebackOn: ChargebackOn;
  report: PaymentReport;
  source: PaymentSource;
  now: number;
}

export interface SettleDecision {
  /** The payment to store (the same object when nothing changed). */
  payment: PaymentRecord;
  changed: boolean;
  /** In the order they apply (APPROVE before REFUND when both happen at once). */
  order: OrderEffect[];
  /** Rule 7: the payment expired here; cancel it at the provider (best effort). */
  cancelAtProvider: boolean;
  events: PaymentEvent[];
}

/** Money as whole minor units: the comparisons of rule 2 and the refunded amounts are exact integers. */
export const toCents = (amount: number) => Math.round(amount * 100);
const fromCents = (cents: number) => cents / 100;

/**
 * Rule 2: a fetched state is this payment's only when its reference is the payment's id, its
 * amount and currency are the payment's and its account is the store's configured account. The
 * first part that fails, or null. An answer naming no account or no reference is not bound.
 */
export function bindingMismatch(payment: Pick<PaymentRecord, 'id' | 'amount' | 'currency'>, snapshot: ProviderSnapshot, accountId: string | null): BindingPart | null {
  if (snapshot.reference !== payment.id) return 'reference';
  if (snapshot.amount_cents !== toCents(payment.amount)) return 'amount';
  if (snapshot.currency.toUpperCase() !== payment.currency.toUpperCase()) return 'currency';
  if (accountId === null || snapshot.account !== accountId) return 'account';
  return null;
}

const DISPUTE_STAGE: Record<DisputeStage, number> = { OPEN: 1, WON: 2, LOST: 2 };

/** OPEN moves to an outcome; an outcome (WON or LOST) is final. */
function joinDispute(current: DisputeStage | null, seen: DisputeStage | null): DisputeStage | null {
  if (seen === null) return current;
  if (current === null) return seen;
  return DISPUTE_STAGE[seen] > DISPUTE_STAGE[current] ? seen : current;
}

interface Observation {
  status: PaymentStatus;
  refundedCents: number;
  dispute: DisputeStage | null;
  paidAt: string | null;
  providerRef: string | null;
}

function observe(payment: PaymentRecord, report: PaymentReport): Observation | null {
  if (report.kind === 'clock') return null;
  if (report.kind === 'recorded') {
    if (report.status === 'CANCELED') return { status: 'CANCELED', refundedCents: 0, dispute: null, paidAt: null, providerRef: null };
    // A refund we record is of money we saw arrive: recorded on a payment never seen paid, it would approve its order.
    return wasPaid(payment.status) ? { status: 'REFUNDED', refundedCents: toCents(payment.amount), dispute: null, paidAt: null, providerRef: null } : null;
  }
  const { snapshot } = report;
  // Money refunded or disputed was paid first, whatever the status beside it says.
  const impliesPaid = snapshot.refunded_cents > 0 || snapshot.dispute !== null;
  let status: PaymentStatus = impliesPaid && STATUS_RANK[snapshot.status] < PAID_RANK ? 'PAID' : snapshot.status;
  // One failed attempt does not end a checkout that takes several (the buyer tries another card): it expires instead (rule 7).
  if (status === 'FAILED' && RETRYABLE_CHECKOUTS.has(payment.gateway)) status = 'PENDING';
  return { status, refundedCents: snapshot.refunded_cents, dispute: snapshot.dispute, paidAt: snapshot.paid_at, providerRef: snapshot.provider_ref };
}

/**
 * The status a paid payment's progress stands for: refunded in full is REFUNDED; a dispute lost,
 * or opened when the store charges back on opening (rule 6), is CHARGEBACK. Of REFUNDED and
 * CHARGEBACK the first reached stays (rule 1).
 */
function paidStatus(joined: PaymentStatus, refundedCents: number, amountCents: number, dispute: DisputeStage | null, chargebackOn: ChargebackOn): PaymentStatus {
  if (STATUS_RANK[joined] !== PAID_RANK) return joined;
  if (refundedCents >= amountCents) return 'REFUNDED';
  if (dispute === 'LOST' || (dispute !== null && chargebackOn === 'DISPUTE_OPENED')) return 'CHARGEBACK';
  return joined;
}

/** Rule 4: how a payment first seen paid stands to its order as it is at that moment. */
function roleWhenPaid(payment: PaymentRecord, order: OrderView): { role: OrderRole; effect: 'APPROVE' | 'LINK' | null } {
  if (order.payment_id === payment.id) return { role: 'ORDER', effect: null };
  if (order.status === 'PENDING') return { role: 'ORDER', effect: 'APPROVE' };
  if (order.status === 'APPROVED' && order.payment_id === null) return { role: 'ORDER', effect: 'LINK' };
  if (order.status === 'CANCELED') return { role: 'UNFULFILLED', effect: null };
  return { role: 'DUPLICATE', effect: null };
}

/**
 * The one flag an operator sees, by priority: a mismatch stays until looked at; a duplicate or
 * unfulfilled payment until its money went back; then the dispute, then a partial refund.
 */
function attentionOf(payment: Pick<PaymentRecord, 'attention' | 'order_role' | 'status' | 'dispute' | 'amount' | 'refunded_amount'>): PaymentAttention | null {
  if (payment.attention === 'MISMATCH') return 'MISMATCH';
  const moneyReturned = payment.status === 'REFUNDED' || payment.status === 'CHARGEBACK';
  if ((payment.order_role === 'DUPLICATE' || payment.order_role === 'UNFULFILLED') && !moneyReturned) return payment.order_role;
  if (payment.dispute === 'WON' && payment.status === 'CHARGEBACK') return 'DISPUTE_WON';
  if (payment.dispute === 'OPEN' && payment.status === 'PAID') return 'DISPUTE_OPEN';
  const refunded = toCents(payment.refunded_amount);
  if (payment.status === 'PAID' && refunded > 0 && refunded < toCents(payment.amount)) return 'PARTIAL_REFUND';
  return null;
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

function unchanged(payment: PaymentRecord): SettleDecision {
  return { payment, changed: false, order: [], cancelAtProvider: false, events: [] };
}

/**
 * A PayPal order the buyer approved waits for our capture: take the money only while the payment is
 * live and unexpired (after its expiry the order lapses at PayPal untouched, rather than money
 * arriving for an order that was canceled) and only when the order is this payment's (rule 2).
 */
export function shouldCapture(
  payment: Pick<PaymentRecord, 'id' | 'amount' | 'currency' | 'status' | 'expires_at'>,
  snapshot: ProviderSnapshot,
  accountId: string | null,
  now: number,
): boolean {
  if (snapshot.capturable !== true || !isLive(payment.status)) return false;
  if (payment.expires_at !== null && now >= Date.parse(payment.expires_at)) return false;
  return bindingMismatch(payment, snapshot, accountId) === null;
}

/** Rules 1-7 of section 13, for every source. */
export function settle({ payment, order, accountId, chargebackOn, report, source, now }: SettleInput): SettleDecision {
  if (report.kind === 'provider') {
    const mismatch = bindingMismatch(payment, report.snapshot, accountId);
    // Rule 2: someone else's (or a tampered) state changes nothing but the flag.
    if (mismatch !== null) {
      if (payment.attention === 'MISMATCH') return unchanged(payment);
      const flagged = { ...payment, attention: 'MISMATCH' as const, mismatch, revision: payment.revision + 1, updated_at: iso(now) };
      return { payment: flagged, changed: true, order: [], cancelAtProvider: false, events: ['payment.attention'] };
    }
  }

  const seen = observe(payment, report);
  const amountCents = toCents(payment.amount);
  let refundedCents = Math.min(amountCents, Math.max(toCents(payment.refunded_amount), seen?.refundedCents ?? 0));
  const dispute = joinDispute(payment.dispute, seen?.dispute ?? null);
  const joined = seen && advances(payment.status, seen.status) ? seen.status : payment.status;
  let status = paidStatus(joined, refundedCents, amountCents, dispute, chargebackOn);

  // A provider may say `refunded` before its refunded amount catches up: REFUNDED is refunded in full.
  if (status === 'REFUNDED') refundedCents = amountCents;

  // Rule 7: a payment still live past its expiry is EXPIRED (money arriving later is still PAID: rule 1).
  let cancelAtProvider = false;
  if (isLive(status) && payment.expires_at !== null && now >= Date.parse(payment.expires_at)) {
    status = 'EXPIRED';
    cancelAtProvider = true;
  }

  const effects: OrderEffect[] = [];
  let orderRole = payment.order_role;
  let orderStatus = order.status;
  let paidAt = payment.paid_at;
  let chargeRef = payment.charge_ref;
  if (seen?.providerRef && advances(payment.status, status) && !wasPaid(payment.status)) chargeRef = seen.providerRef;
  if (wasPaid(status) && !wasPaid(payment.status)) {
    paidAt = seen?.paidAt ?? iso(now);
    const { role, effect } = roleWhenPaid(payment, order);
    orderRole = role;
    if (effect) {
      effects.push({ kind: effect, payment_id: payment.id, gateway: payment.gateway, paid_at: paidAt });
      orderStatus = 'APPROVED';
    }
  }
  // Rules 5 and 6: the order this payment paid follows its money back, once (the crossing into rank 4 happens once).
  if (orderRole === 'ORDER' && orderStatus === 'APPROVED' && status !== payment.status) {
    if (status === 'REFUNDED') effects.push({ kind: 'REFUND' });
    if (status === 'CHARGEBACK') effects.push({ kind: 'CHARGEBACK' });
  }

  const next: PaymentRecord = {
    ...payment,
    status,
    refunded_amount: fromCents(refundedCents),
    dispute,
    order_role: orderRole,
    paid_at: paidAt,
    charge_ref: chargeRef,
  };
  next.attention = attentionOf(next);

  const statusMoved = status !== payment.status;
  const changed =
    statusMoved ||
    next.refunded_amount !== payment.refunded_amount ||
    next.dispute !== payment.dispute ||
    next.attention !== payment.attention ||
    next.order_role !== payment.order_role ||
    next.charge_ref !== payment.charge_ref ||
    next.paid_at !== payment.paid_at;
  if (!changed) return unchanged(payment);

  const events = paymentEventsOf(payment, next);
  next.history = statusMoved ? [...payment.history, { at: iso(now), from: payment.status, to: status, source }].slice(-HISTORY_MAX) : payment.history;
  next.revision = payment.revision + 1;
  next.updated_at = iso(now);
  return { payment: next, changed: true, order: effects, cancelAtProvider, events };
}

export interface NewPayment {
  id: string;
  store_id: number;
  order_id: number;
  gateway: Gateway;
  amount: number;
  currency: string;
  /** When it stops being payable (a PIX charge's expiry), or null when the provider decides. */
  expires_at: string | null;
}

/**
 * A payment about to be created at its provider: CREATED, before the provider call (so a retry
 * finds it). No event yet: `payment.created` comes with the provider's charge (`paymentEventsOf`).
 */
export function newPayment(input: NewPayment, now: number): { payment: PaymentRecord } {
  const at = iso(now);
  return {
    payment: {
      ...input,
      provider: GATEWAY_PROVIDER[input.gateway],
      currency: input.currency.toUpperCase(),
      status: 'CREATED',
      provider_ref: null,
      charge_ref: null,
      pix_code: null,
      qr_code: null,
      checkout_url: null,
      paid_at: null,
      refunded_amount: 0,
      attention: null,
      mismatch: null,
      dispute: null,
      order_role: null,
      history: [],
      revision: 0,
      created_at: at,
      updated_at: at,
    },
  };
}

const MINUTE_MS = 60_000;
/** Mercado Pago accepts a PIX expiry between 30 minutes and 30 days; the store setting bounds it to 30..1440 minutes. */
export const PIX_EXPIRATION_MINUTES = { min: 30, max: 1440, default: 30 } as const;

/** The moment a PIX charge created at `now` stops being payable. */
export function pixExpiresAt(now: number, minutes: number): string {
  return iso(now + minutes * MINUTE_MS);
}

/** Pull on poll: at most one provider call per payment per 10 seconds, and only while it is live. */
export const POLL_FETCH_INTERVAL_MS = 10_000;
export function pollMayAskProvider(status: PaymentStatus, lastCheckedAt: string | null, now: number): boolean {
  return isLive(status) && (lastCheckedAt === null || now - Date.parse(lastCheckedAt) >= POLL_FETCH_INTERVAL_MS);
}

/** Section 8: a checkout order unpaid this long after it was placed is canceled, unless a payment is still live. */
export const CHECKOUT_UNPAID_MS = 30 * MINUTE_MS;

/**
 * Rule 7, its second half: a PENDING checkout order is canceled once its 30 minutes are over and
 * none of its payments is alive (an unexpired PIX charge keeps it open to its own expiry).
 */
export function checkoutAbandoned(order: { status: OrderStatus; created_at: string }, payments: readonly Pick<PaymentRecord, 'status'>[], now: number): boolean {
  if (order.status !== 'PENDING') return false;
  if (now - Date.parse(order.created_at) < CHECKOUT_UNPAID_MS) return false;
  return !payments.some((payment) => isLive(payment.status));
}

/** What a provider's create call gave the buyer to pay with (lib/payments/adapter.ts `CreatedCharge`, minus its snapshot). */
export interface ChargeMade {
  provider_ref: string;
  pix_code: string | null;
  qr_code: string | null;
  checkout_url: string | null;
  expires_at: string | null;
}

/**
 * The checkout's create call answered: the payment is PENDING at its provider, with what the buyer
 * needs to pay and the provider object that names it. Only a CREATED payment moves (a notification
 * may have settled it further while the call was out: then it keeps its status, and gains the
 * buyer's fields it lacks).
 */
export function chargeCreated(payment: PaymentRecord, charge: ChargeMade, now: number): PaymentRecord {
  const moves = payment.status === 'CREATED';
  return {
    ...payment,
    status: moves ? 'PENDING' : payment.status,
    provider_ref: payment.provider_ref ?? charge.provider_ref,
    pix_code: charge.pix_code,
    qr_code: charge.qr_code,
    checkout_url: charge.checkout_url,
    expires_at: charge.expires_at ?? payment.expires_at,
    history: moves ? [...payment.history, { at: iso(now), from: 'CREATED' as const, to: 'PENDING' as const, source: 'CHECKOUT' as const }].slice(-HISTORY_MAX) : payment.history,
    revision: payment.revision + 1,
    updated_at: iso(now),
  };
}
