import { randomBytes } from 'node:crypto';
import { creditCommission } from '#lib/db/affiliate.ts';
import { allocateCommandIds } from '#lib/db/command.ts';
import { readCouponUse, releaseCouponUse, reserveCouponUse } from '#lib/db/coupon-use.ts';
import { nowIso } from '#lib/db/keys.ts';
import {
  clearCommissionPending,
  getOrderItem,
  markApproved,
  markCanceled,
  nextOrderId,
  putNewOrder,
  readOrderCatalog,
  toOrder,
  type OrderItem,
} from '#lib/db/order.ts';
import { retrying } from '#lib/db/transact.ts';
import type { CouponRecord } from '#lib/domain/coupon.ts';
import { newChain, planCommands } from '#lib/domain/delivery.ts';
import { approval, assertResendable, cancellation, decideCoupon, draftOrder, orderContents } from '#lib/domain/order.ts';
import { resendCommands } from '#lib/flows/command.ts';
import { couponNotFound } from '#lib/errors.ts';
import type { Order, OrderCreate } from '#lib/schemas/order.ts';
import { currentTimeMs } from '#lib/clock.ts';

/**
 * The order use cases: each reads (lib/db/order.ts and its neighbours), lets the order rules
 * decide (lib/domain/order.ts), then writes once. Calls exclude the credential lookup.
 *
 * | use case  | calls                                                                                      |
 * |-----------|--------------------------------------------------------------------------------------------|
 * | create    | Query variables + BatchGet (packages, coupon sentinel), [BatchGet coupon + counters], order |
 * |           | id ADD, TransactWrite: 4, 5 with a coupon                                                  |
 * | approve   | GetItem + command ids ADD (none without commands) + TransactWrite: 3; with a ref_code       |
 * |           | creditCommission (1 call when no affiliate owns the code, else 4) + UpdateItem (+2..5)     |
 * | approve an APPROVED order | GetItem: 1                                                                 |
 * | cancel    | GetItem + TransactWrite: 2                                                                 |
 * | resend    | GetItem + BatchGet (commands, chain) + TransactWrite (each command back, chain restarted): 3 |
 *
 * A collision or a stale read (the order, a package or the coupon changed in between) reads
 * again and decides again (`retrying`); ids allocated by a lost round are kept for the next one.
 */

/** 128 random bits, URL-safe: the order's unguessable public reference. */
const newInternalId = () => randomBytes(16).toString('base64url');

export function createOrder(storeId: number, input: OrderCreate): Promise<Order> {
  let orderId: number | undefined;
  const internalId = newInternalId();
  return retrying(async () => {
    const { catalog, couponDiscountId, variables } = await readOrderCatalog(storeId, input.packages.map((line) => line.package_id), input.coupon);
    const contents = orderContents(input, catalog, variables);
    const now = currentTimeMs();
    let coupon: CouponRecord | null = null;
    if (input.coupon !== null) {
      // No sentinel, or the coupon deleted between the two reads: the code names no coupon.
      const state = couponDiscountId === undefined ? undefined : await readCouponUse(storeId, couponDiscountId, input);
      if (!state) throw couponNotFound(input.coupon);
      coupon = decideCoupon(state, contents.lines, input, now);
    }
    orderId ??= await nextOrderId(storeId);
    const draft = draftOrder({ input, catalog, defined: variables, contents, coupon }, { storeId, orderId, internalId }, now);
    await putNewOrder(draft, coupon && reserveCouponUse(storeId, coupon, input, draft.created_at));
    return toOrder(draft);
  });
}

/** Credits the ref_code's affiliate (once per order) and clears the flag that says it is owed. */
async function settleCommission(storeId: number, order: OrderItem): Promise<void> {
  if (!order.commission_pending || order.ref_code === null) return;
  await creditCommission(storeId, order.ref_code, order.id, order.total, order.packages);
  await clearCommissionPending(storeId, order.id);
}

export async function approveOrder(storeId: number, orderId: number): Promise<Order> {
  // Ids allocated by a lost round are kept for the next one (the count never changes: deliveries are fixed at sale).
  let firstCommandId: number | undefined;
  const approved = await retrying(async () => {
    const order = await getOrderItem(storeId, orderId);
    if (approval(order.status) === 'already') return order;
    const approvedAt = nowIso();
    const plan = planCommands(order.deliveries, 'APPROVED');
    firstCommandId ??= plan.length > 0 ? await allocateCommandIds(storeId, plan.length) : 0;
    const chain = newChain(plan.map((_, index) => firstCommandId! + index), plan);
    return markApproved(storeId, order, { plan, chain }, firstCommandId, approvedAt);
  });
  await settleCommission(storeId, approved);
  return toOrder(approved);
}

/** PENDING -> CANCELED, giving the coupon use back. */
export function cancelOrder(storeId: number, orderId: number): Promise<Order> {
  // Release targets found missing (a deleted coupon): left out of the next attempt.
  const gone = new Set<string>();
  return retrying(async () => {
    const order = await getOrderItem(storeId, orderId);
    if (cancellation(order.status) === 'already') return toOrder(order);
    return toOrder(await markCanceled(storeId, order, releaseCouponUse(storeId, order, gone), nowIso()));
  });
}

/** Puts every command of an APPROVED order back on the queue (PENDING, same execute_at). */
export async function resendOrderCommands(storeId: number, orderId: number): Promise<{ order_id: number; resent: number }> {
  const order = await getOrderItem(storeId, orderId);
  assertResendable(order.status);
  if (order.command_ids.length > 0) await resendCommands(storeId, order.command_ids);
  return { order_id: orderId, resent: order.command_ids.length };
}
