import { getOrderItem, orderResponse } from '#lib/db/order.ts';
import { getPayment } from '#lib/db/payment.ts';
import { readProviderAccount, type ProviderAccount } from '#lib/db/payment-provider.ts';
import { reversal } from '#lib/domain/order.ts';
import { paidItsOrder, type PaymentRecord } from '#lib/domain/payment.ts';
import { conflict, providerRefused, providerUnavailable } from '#lib/errors.ts';
import { reverseOrder } from '#lib/flows/order-reversal.ts';
import { providerAdapter, providerCredentials } from '#lib/flows/payment-adapters.ts';
import { settlePayment, type Learning } from '#lib/flows/payment-settle.ts';
import { ProviderError, type ProviderCredentials } from '#lib/payments/adapter.ts';
import type { Order } from '#lib/schemas/order.ts';
import type { OrderRefundBody, ProviderSnapshot } from '#lib/schemas/payment.ts';

/*
 * The operator's refunds of payments (extensions sections 10 and 13): the order's refund at the
 * provider, and the refund of a payment that is not the order's (the list: payment-read.ts, which
 * opens no provider secrets).
 *
 * | use case                          | calls (after the credential)                                                   |
 * |-----------------------------------|--------------------------------------------------------------------------------|
 * | order refund, no payment          | GetItem order + section 10 as before (lib/flows/order-reversal.ts)             |
 * | order refund, at the provider     | GetItem order + GetItem payment + GetItem account + the provider's refund      |
 * |                                   | (key refund:<payment id>) + settle (order and store GetItems, section 10 step 1 |
 * |                                   | with the payment in its TransactWrite, then steps 2 and 3)                     |
 * | order refund, `at_provider: false`| the same without the account and the provider                                  |
 * | refund of a stray payment         | GetItem payment + GetItem account + the provider's refund + settle (payment only) |
 *
 * The provider is asked before anything is written, so a provider failure (502 when it is down,
 * 409 when it says no: `refundFailure`) changes nothing and a retry is safe: the refund carries the same idempotency key, and a Mercado Pago payment
 * refunded already answers its refunded state. Settling the provider's answer with source
 * OPERATOR is what runs section 10, so racing refunds (and the provider's own refund
 * notification) cross into REFUNDED once: one reversal, whoever settles first.
 */

/**
 * `POST /app/order/{id}/refund`: an order paid through a provider is refunded there first, then
 * settled (section 10 once); an order approved by hand, or already REFUNDED, is section 10 as it
 * always was (which also finishes what a crash left owed). Any state but APPROVED or REFUNDED is
 * 409 before the provider is asked.
 */
export async function refundOrder(storeId: number, orderId: number, body: OrderRefundBody, apiBase: string): Promise<Order> {
  const order = await getOrderItem(storeId, orderId);
  if (order.payment_id === null || reversal(order.status, 'REFUNDED') === 'already') return reverseOrder(storeId, orderId, 'REFUNDED', order);
  const payment = await getPayment(storeId, orderId, order.payment_id);
  const outcome = await settlePayment({
    ...(await refundLearning(payment, body.at_provider, apiBase)),
    storeId,
    orderId,
    paymentId: payment.id,
    source: 'OPERATOR',
    apiBase,
    read: payment,
  });
  // The provider's answer did not bind to the payment (rule 2: MISMATCH): the operator must look before the order moves.
  if (outcome.order.status !== 'REFUNDED')
    throw conflict(`The provider's answer did not settle payment ${payment.id} as refunded (attention ${outcome.payment.attention ?? 'none'}); the order was not refunded`);
  return orderResponse(outcome.order);
}

/**
 * `POST /app/order/{id}/payment/{payment_id}/refund`: a payment that paid nothing (DUPLICATE,
 * UNFULFILLED) refunded at the provider; its order untouched. Refunded already: answered as it is.
 */
export async function refundStrayPayment(storeId: number, orderId: number, paymentId: string, apiBase: string): Promise<PaymentRecord> {
  const payment = await getPayment(storeId, orderId, paymentId);
  if (paidItsOrder(payment)) throw conflict(`Payment ${paymentId} paid the order: refund the order instead (POST /v1/app/order/${orderId}/refund)`);
  if (payment.status === 'REFUNDED') return payment;
  if (payment.status !== 'PAID') throw conflict(`Payment is ${payment.status}; only a PAID payment that is not the order's can be refunded here`);
  return (await settlePayment({ ...(await refundLearning(payment, true, apiBase)), storeId, orderId, paymentId, source: 'OPERATOR', apiBase, read: payment })).payment;
}

/** What the refund settles: the provider's answer to the refund (made now), or the refund only recorded. */
async function refundLearning(
  payment: PaymentRecord,
  atProvider: boolean,
  apiBase: string,
): Promise<{ learn: Learning; provider?: { account: ProviderAccount; credentials: ProviderCredentials } }> {
  if (!atProvider) return { learn: { ask: 'report', report: { kind: 'recorded', status: 'REFUNDED' } } };
  try {
    const account = await readProviderAccount(payment.store_id, payment.provider);
    // A removed account keeps its secrets for the payments it made (section 13): only a missing one cannot refund.
    if (!account) throw new ProviderError(payment.provider, 'unavailable', 'the store has no account at this provider');
    const credentials = await providerCredentials(account);
    const snapshot: ProviderSnapshot = await (await providerAdapter(payment, apiBase)).refund(credentials, payment);
    return { learn: { ask: 'snapshot', snapshot }, provider: { account, credentials } };
  } catch (error) {
    if (error instanceof ProviderError) throw refundFailure(error);
    throw error;
  }
}

/**
 * A refund the provider did not make, as the operator's answer (nothing was changed either way):
 * the provider down, timed out or answering 5xx/429 (and what each adapter knows to be transient,
 * a Stripe or PayPal idempotency conflict) is 502 PROVIDER_UNAVAILABLE, to try again; the
 * provider saying no is the store's business, 409 with the provider's reason: PROVIDER_REFUSED for
 * the payment (too old to refund, disputed, not refundable in its state, unknown to this account)
 * and PROVIDER_CREDENTIALS when the store's stored credentials were refused. Retrying those
 * changes nothing; the operator acts at the provider, or records the refund with `at_provider: false`.
 */
function refundFailure(error: ProviderError) {
  if (error.failure === 'unavailable') return providerUnavailable(`The payment provider did not refund the payment (${error.message}); nothing was changed, try again`);
  if (error.failure === 'credentials') {
    return providerRefused(
      `${error.provider} refused the store's credentials (${error.reason}); nothing was changed: update them with PUT /v1/app/payment/provider/${error.provider}`,
      'PROVIDER_CREDENTIALS',
    );
  }
  return providerRefused(
    `${error.provider} refused the refund (${error.reason}); nothing was changed, and asking again gets the same answer: see the payment in the provider's dashboard`,
  );
}
