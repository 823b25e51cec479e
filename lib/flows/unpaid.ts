import { atTime } from '#lib/clock.ts';
import { orderPayments, paymentCountUnchanged } from '#lib/db/payment.ts';
import { dueIn, jobDoneThrough, markJobDoneThrough } from '#lib/db/unpaid.ts';
import { checkoutAbandoned } from '#lib/domain/payment.ts';
import { minutesToHandle } from '#lib/domain/unpaid.ts';
import { HttpError } from '#lib/errors.ts';
import { cancelPending } from '#lib/flows/order.ts';

/**
 * The scheduled job that cancels unpaid checkout orders (section 8: still PENDING 30 minutes
 * after placement), giving back their stock, limits and coupon use. It reads the job's state,
 * then only the minute buckets of the due list (lib/db/unpaid.ts) that have passed since, and
 * cancels each order found there with the usual conditional cancel: an order paid (APPROVED) or
 * canceled meanwhile is left as it is, and so is an order with a payment still live (a PIX charge
 * of 60 minutes outlives the 30): the payments reconciler cancels it once no payment is left
 * alive (section 13 rule 7, `checkoutAbandoned`). Its cost follows the orders due, never the
 * number of stores: GetItem state + 1 Query per minute + per order due a GetItem (+ a Query of
 * its payments when still PENDING, + 1 write when canceled) + 1 Put.
 * `now` is a parameter, so a test runs it "31 minutes later" without waiting.
 */
export const UNPAID_JOB = 'unpaid-orders-cancel';

/**
 * Cancels the order if it is still PENDING with no payment alive at `now`; true when this call
 * canceled it. The cancel is conditioned on the order's payment count being the one read: a
 * buyer's payment created between the read of the payments and the cancel makes it read again and
 * spare the order (lib/db/payment.ts `paymentCountUnchanged`), instead of leaving a live payment
 * on a canceled order.
 */
export async function cancelIfUnpaid(storeId: number, orderId: number, now: number): Promise<boolean> {
  let applied = false;
  try {
    await cancelPending(storeId, orderId, async (order) => {
      // Decided again on every retry: the last reading counts.
      applied = false;
      if (order.status !== 'PENDING') return 'already';
      const payments = await orderPayments(storeId, orderId);
      applied = checkoutAbandoned(order, payments, now);
      return applied ? { guards: [paymentCountUnchanged(storeId, orderId, payments.length)] } : 'already';
    });
  } catch (error) {
    // An order that no longer exists has nothing to give back.
    if (!(error instanceof HttpError && error.status === 404)) throw error;
    applied = false;
  }
  return applied;
}

export function cancelUnpaidOrders(now: number): Promise<{ minutes: number; canceled: number }> {
  // The cancels stamp `canceled_at` with the job's `now`, not the wall clock.
  return atTime(now, () => cancelDue(now));
}

async function cancelDue(now: number): Promise<{ minutes: number; canceled: number }> {
  const minutes = minutesToHandle(await jobDoneThrough(UNPAID_JOB), now);
  let canceled = 0;
  for (const minute of minutes) {
    const due = await dueIn(minute);
    await Promise.all(due.map(async ({ store_id, order_id }) => (await cancelIfUnpaid(store_id, order_id, now)) && canceled++));
  }
  // Once at the end: a run that fails midway is simply repeated, and a repeated cancel does nothing.
  const last = minutes.at(-1);
  if (last !== undefined) await markJobDoneThrough(UNPAID_JOB, last);
  return { minutes: minutes.length, canceled };
}
