import { randomBytes } from 'node:crypto';
import { readCart } from '#lib/db/cart.ts';
import { allocateCommandIds } from '#lib/db/command.ts';
import { releaseCouponUse, reserveCouponUse } from '#lib/db/coupon-use.ts';
import { nowIso } from '#lib/db/keys.ts';
import {
  clearCommissionPending,
  getOrderItem,
  markApproved,
  markCanceled,
  nextOrderId,
  putNewOrder,
  settleOrderCount,
  orderResponse,
  type OrderItem,
  type OrderPaymentLink,
} from '#lib/db/order.ts';
import type { StoredQuote } from '#lib/db/quote.ts';
import { releasePackages, reservePackages } from '#lib/db/reservation.ts';
import { orderPlacedWrite } from '#lib/db/idempotency.ts';
import { requestEffects } from '#lib/db/request-effects.ts';
import { retrying, type GuardedWrite } from '#lib/db/transact.ts';
import { fileUnpaid } from '#lib/db/unpaid.ts';
import { creditOrderCommission } from '#lib/flows/affiliate-commission.ts';
import { assessCart, honouredPrices, orderEmail, variableNamesGiven, type CartPrices, type CartRequest } from '#lib/domain/cart.ts';
import { newChain } from '#lib/domain/delivery.ts';
import { approval, approvalPlan, assertResendable, cancellation, draftOrder, variableNamesInCommands, type OrderClient } from '#lib/domain/order.ts';
import { minuteOf, UNPAID_AFTER_MS } from '#lib/domain/unpaid.ts';
import { resendCommands } from '#lib/flows/command.ts';
import type { CheckoutExtras, Order, OrderCreate } from '#lib/schemas/order.ts';
import { currentTimeMs } from '#lib/clock.ts';

/*
 * The order use cases: each reads (lib/db/cart.ts, lib/db/order.ts and their neighbours), lets
 * the rules decide (lib/domain/cart.ts, lib/domain/order.ts), then writes once. Calls exclude the
 * credential lookup.
 *
 * | use case  | calls                                                                                      |
 * |-----------|--------------------------------------------------------------------------------------------|
 * | place     | Query variables + Query promos + BatchGet (packages, coupon sentinel, quote, buyer),       |
 * |           | [BatchGet coupon + counters + limit counters], order id ADD, TransactWrite: 5, or 6 with a |
 * |           | coupon or a package with a per-customer limit                                              |
 * | approve   | GetItem + command ids ADD (none without commands) + TransactWrite: 3 (APPROVED and timed |
 * |           | EXPIRED commands, one batch); with a ref_code                                              |
 * |           | creditOrderCommission (1 call when no affiliate owns the code, 2 when none is owed, else 4) |
 * |           | + UpdateItem (+2..5)                                                                       |
 * | approve an APPROVED order | GetItem: 1                                                                 |
 * | cancel    | GetItem + TransactWrite: 2                                                                 |
 * | resend    | GetItem + one BatchGet (the commands and their chain) + TransactWrite (each command back, chain restarted): 3 |
 *
 * A collision or a stale read (the order, a package or the coupon changed in between) reads
 * again and decides again (`retrying`); ids allocated by a lost round are kept for the next one.
 */

/** 128 random bits, URL-safe: the order's unguessable public reference. */
export const newPublicId = () => randomBytes(16).toString('base64url');

/** An order to place, from the operator (`POST /app/order`) or a storefront checkout. */
export interface Placement {
  request: Omit<CartRequest, 'client_email'>;
  /** client_email null: a logged-in buyer's own (see orderEmail). */
  client: Omit<OrderClient, 'client_email'> & { client_email: string | null };
  /** The logged-in buyer, or null (an operator's order, a guest's checkout). */
  customerId: number | null;
  /** A quote to honour when it was issued for this cart (`signature`). */
  quote: { id: string; signature: string } | null;
  checkout: CheckoutExtras | null;
}

/** Reads, decides and writes a new PENDING order: stock, limits and coupon reserved in its own transaction. */
export async function placeOrder(storeId: number, placement: Placement): Promise<OrderItem> {
  const { client, customerId, quote, checkout } = placement;
  // An earlier attempt of this Idempotency-Key placed its order and lost the answer: that order is the answer.
  const effects = requestEffects();
  if (effects?.earlierOrderId !== undefined) return getOrderItem(storeId, effects.earlierOrderId);
  // With a key, the order's transaction also records it (one more item: lib/db/idempotency.ts orderPlacedWrite).
  const claim = effects?.claim;
  const request = claim ? { ...placement.request, extraWrites: placement.request.extraWrites + 1 } : placement.request;
  let orderId: number | undefined;
  const internalId = newPublicId();
  return retrying(async () => {
    const read = await readCart(storeId, {
      packageIds: request.lines.map((line) => line.package_id),
      coupon: request.coupon,
      refCode: request.ref_code,
      client_email: client.client_email,
      client_identifier: client.client_identifier,
      quoteId: quote?.id ?? null,
      customerId,
      storefront: request.terms !== undefined,
      variableNames: variableNamesGiven(request),
      commandNames: variableNamesInCommands,
    });
    const now = currentTimeMs();
    const email = orderEmail(client.client_email, customerId === null ? 'guest' : read.customer);
    const quoted = quote ? honouredPrices(read.quote as StoredQuote<CartPrices> | undefined, quote.signature, now) : null;
    const assessed = assessCart({ ...request, client_email: email }, { ...read, quoted }, now);
    orderId ??= await nextOrderId(storeId);
    const draft = draftOrder(
      { client: { ...client, client_email: email }, catalog: read.catalog, knownVariables: read.variableNames, assessed, checkout },
      { storeId, orderId, internalId },
      now,
    );
    const fields = new Map(request.lines.map((line) => [line.package_id, `${line.field}.quantity`]));
    const coupon = assessed.coupon && reserveCouponUse(storeId, assessed.coupon, draft, draft.created_at);
    await putNewOrder(draft, coupon?.counterSks ?? [], [
      ...reservePackages(storeId, {
        packageIds: draft.package_ids,
        stock: assessed.stock,
        limits: assessed.limits,
        email,
        fieldOf: (id) => fields.get(id) ?? 'packages',
        now: draft.created_at,
      }),
      ...(coupon?.writes ?? []),
      ...(checkout ? [fileUnpaid(storeId, draft.id, now + UNPAID_AFTER_MS, minuteOf(now + UNPAID_AFTER_MS))] : []),
      ...(claim ? [orderPlacedWrite(claim, draft.id)] : []),
    ]);
    return { ...draft, coupon_counters: coupon?.counterSks ?? [], command_ids: [], payment_id: null, gateway: null, paid_at: null };
  });
}

export async function createOrder(storeId: number, input: OrderCreate): Promise<Order> {
  const order = await placeOrder(storeId, {
    request: {
      lines: input.packages.map((line, index) => ({ ...line, field: `packages.${index}` })),
      values: input.variables.map((given, index) => ({ ...given, nameField: `variables.${index}.name`, valueField: `variables.${index}.value` })),
      valuesField: 'variables',
      coupon: input.coupon,
      ref_code: input.ref_code,
      client_identifier: input.client_identifier,
      extraWrites: 0,
      inputProblems: [],
    },
    client: input,
    customerId: null,
    quote: null,
    checkout: null,
  });
  return orderResponse(order);
}

/** Credits the ref_code's affiliate (once per order) and clears the flag that says it is owed. */
export async function settleCommission(storeId: number, order: OrderItem): Promise<void> {
  if (!order.commission_pending || order.ref_code === null) return;
  await creditOrderCommission(storeId, { ...order, ref_code: order.ref_code });
  await clearCommissionPending(storeId, order.id);
}

/** Command ids allocated by a round that lost its race, kept for the next round (the count never changes: deliveries are fixed at sale). */
export interface CommandIdReserve {
  first?: number;
}

/**
 * One round of the section 4 approval of `order` as read (PENDING): the commands planned and
 * queued, the status and the counts in one transaction, with the payment that paid it when there
 * is one (`paid`, section 13 rule 3). StaleRead when the order (or the payment) changed since read.
 */
export async function approveRound(
  storeId: number,
  order: OrderItem,
  reserve: CommandIdReserve,
  paid?: { link: OrderPaymentLink; writes: readonly GuardedWrite[] },
): Promise<OrderItem> {
  const now = currentTimeMs();
  const { plan, packages } = approvalPlan(order, now);
  reserve.first ??= plan.length > 0 ? await allocateCommandIds(storeId, plan.length) : 0;
  const first = reserve.first;
  const chain = newChain(
    plan.map((_, index) => first + index),
    plan,
  );
  return markApproved(storeId, order, { plan, chain }, first, new Date(now).toISOString(), packages, paid);
}

/** What an approval leaves owed after its transaction: the counts of an approval too large for them (lib/db/order.ts), the commission. */
export async function finishApproval(storeId: number, approved: OrderItem): Promise<void> {
  // A repeated call finishes what a crash left.
  await settleOrderCount(approved);
  await settleCommission(storeId, approved);
}

export async function approveOrder(storeId: number, orderId: number): Promise<Order> {
  const reserve: CommandIdReserve = {};
  const approved = await retrying(async () => {
    const order = await getOrderItem(storeId, orderId);
    if (approval(order.status) === 'already') return order;
    return approveRound(storeId, order, reserve);
  });
  await finishApproval(storeId, approved);
  return orderResponse(approved);
}

/**
 * What a cancel does with the order it read: leave it (`already`), cancel it (`apply`), or cancel
 * it only if what the decision read besides the order still holds (`guards`, conditions written in
 * the cancel's transaction that fail with StaleRead, so the decision is made again on fresh reads).
 */
export type CancelVerdict = 'apply' | 'already' | { guards: readonly GuardedWrite[] };

/**
 * PENDING -> CANCELED, giving back what the order holds (coupon use, stock, limits). `decide`
 * says what to do with the order read, again on every retry: the operator's cancel refuses an
 * APPROVED order (409), the abandoned-checkout cancel leaves an order that is no longer PENDING or
 * has a live payment alone.
 */
export function cancelPending(storeId: number, orderId: number, decide: (order: OrderItem) => CancelVerdict | Promise<CancelVerdict>): Promise<OrderItem> {
  // Release targets found missing (a deleted coupon or package): left out of the next attempt.
  const gone = new Set<string>();
  return retrying(async () => {
    const order = await getOrderItem(storeId, orderId);
    const verdict = await decide(order);
    if (verdict === 'already') return order;
    const guards = verdict === 'apply' ? [] : verdict.guards;
    return markCanceled(storeId, order, [...guards, ...releaseCouponUse(storeId, order, gone), ...releasePackages(storeId, order, gone)], nowIso());
  });
}

export async function cancelOrder(storeId: number, orderId: number): Promise<Order> {
  return orderResponse(await cancelPending(storeId, orderId, (order) => cancellation(order.status)));
}

/** Puts every command of an APPROVED order back on the queue (PENDING, same execute_at). */
export async function resendOrderCommands(storeId: number, orderId: number): Promise<{ order_id: number; resent: number }> {
  const order = await getOrderItem(storeId, orderId);
  assertResendable(order.status);
  if (order.command_ids.length > 0) await resendCommands(storeId, order.command_ids);
  return { order_id: orderId, resent: order.command_ids.length };
}
