import { currentTimeMs } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import { getOrderItemByInternalId, type OrderItem } from '#lib/db/order.ts';
import { newPaymentId, orderPayments, paymentResponse, readPayment, settledPaymentWrite, startPayment, storeCreatedCharge } from '#lib/db/payment.ts';
import { listProviderAccounts, readProviderAccount, type ProviderAccount } from '#lib/db/payment-provider.ts';
import { getStoreOrThrow, type Store } from '#lib/db/store.ts';
import { retrying, StaleRead, writeGuarded } from '#lib/db/transact.ts';
import { CHECKOUT_UNPAID_MS, chargeCreated, newPayment, pixExpiresAt, PIX_EXPIRATION_MINUTES, settle, type OrderView } from '#lib/domain/payment.ts';
import { gatewayChoices, paymentStart, returnUrlAllowed } from '#lib/domain/payment-checkout.ts';
import { conflict, providerUnavailable, unprocessable } from '#lib/errors.ts';
import { accountNotificationUrl, carryNotifyKey } from '#lib/flows/payment-provider-read.ts';
import { providerAdapter, providerCredentials } from '#lib/flows/payment-adapters.ts';
import { ProviderError, type ChargeLine } from '#lib/payments/adapter.ts';
import type { OrderPaymentBody } from '#lib/schemas/checkout.ts';
import { GATEWAY_PROVIDER, GATEWAYS, type Gateway, type PaymentRecord } from '#lib/schemas/payment.ts';
import { serverKeys } from '#lib/server-secret.ts';

/*
 * A buyer's payment of a PENDING order (extensions section 13): at checkout, and through
 * `POST /webstore/order/{internal_id}/payment`. Calls exclude the store-domain lookup.
 *
 * | step                | calls                                                                             |
 * |---------------------|-----------------------------------------------------------------------------------|
 * | choose              | GetItem store + Query provider accounts: 2 (before anything is written)           |
 * | a new payment       | Query the order's payments + TransactWrite (payment CREATED, the order's payment  |
 * |                     | count, order still PENDING) + [the provider's create call] + TransactWrite        |
 * |                     | (PENDING + the provider ref): 3 (+1 per other live payment canceled)              |
 * | a live one answered | Query the order's payments: 1                                                      |
 *
 * The payment is written CREATED before the provider is called, so that a retry (of this request,
 * or a racing one) finds it and calls again under the same idempotency key (`create:<payment id>`):
 * the provider answers the charge it made, never a second one.
 */

/** What the buyer chose, checked: an enabled gateway of the store and a return_url that is no open redirect. */
export interface PaymentChoice {
  store: Store;
  gateway: Gateway;
  account: ProviderAccount;
  returnUrl: string | null;
}

/** The gateways whose provider page needs a return_url (Stripe Checkout's success_url, PayPal's return_url). */
const REDIRECT_GATEWAYS: ReadonlySet<Gateway> = new Set(['STRIPE', 'PAYPAL']);

/** 422 on `gateway` (unknown, or not enabled in this store) or `return_url`; nothing is read beyond the store and its accounts. */
export async function choosePayment(storeId: number, gateway: string, returnUrl: string | null): Promise<PaymentChoice> {
  const [store, accounts] = await Promise.all([getStoreOrThrow(storeId), listProviderAccounts(storeId)]);
  const offered = gatewayChoices(accounts, config.testGatewayAllowed).map((choice) => choice.gateway);
  const chosen = offered.find((code) => code === gateway);
  if (!chosen) {
    const known = GATEWAYS.some((code) => code === gateway) ? 'not enabled in this store' : 'not a gateway';
    throw unprocessable(`gateway ${gateway} is ${known}; this store takes: ${offered.join(', ') || 'none'}`, 'gateway');
  }
  // Stripe's and PayPal's hosted pages must send the buyer back somewhere.
  if (returnUrl === null && REDIRECT_GATEWAYS.has(chosen)) throw unprocessable(`return_url is required with gateway ${chosen}`, 'return_url');
  if (returnUrl !== null && !returnUrlAllowed(returnUrl, store, config.plainHttpStoreOrigins)) {
    throw unprocessable("return_url must be an https address on the store's domain or one of its allowed_origins", 'return_url');
  }
  const account = accounts.find((entry) => entry.provider === GATEWAY_PROVIDER[chosen]);
  if (!account) throw new Error(`gateway ${chosen} offered with no account`);
  return { store, gateway: chosen, account, returnUrl };
}

/** When a new payment stops being payable: a PIX charge at the account's expiry; the others at section 8's 30 minutes. */
function expiryOf(choice: PaymentChoice, now: number): string {
  const minutes = choice.gateway === 'PIX' ? (choice.account.settings.pix_expiration_minutes ?? PIX_EXPIRATION_MINUTES.default) : CHECKOUT_UNPAID_MS / 60_000;
  return pixExpiresAt(now, minutes);
}

const orderView = (order: OrderItem): OrderView => ({ status: order.status, payment_id: null });

/** A payment that will not be paid (its provider refused it, or a new gateway replaced it), recorded CANCELED through the rules. */
async function recordCanceled(choice: Pick<PaymentChoice, 'store'>, order: OrderItem, payment: PaymentRecord, accountId: string | null): Promise<PaymentRecord> {
  let current = payment;
  return retrying(async () => {
    const decision = settle({
      payment: current,
      order: orderView(order),
      accountId,
      chargebackOn: choice.store.payments.chargeback_on,
      report: { kind: 'recorded', status: 'CANCELED' },
      source: 'CHECKOUT',
      now: currentTimeMs(),
    });
    if (!decision.changed) return current;
    try {
      await writeGuarded([settledPaymentWrite(decision.payment, current.revision)]);
    } catch (error) {
      if (error instanceof StaleRead) current = (await readPayment(order.store_id, order.id, payment.id)) ?? current;
      throw error;
    }
    return decision.payment;
  });
}

/** Thrown when the provider refused or could not be reached: the payment is recorded CANCELED; the caller answers 502. */
export class ChargeFailed extends Error {
  constructor(readonly providerError: ProviderError) {
    super(providerError.message);
    this.name = 'ChargeFailed';
  }
}

/**
 * The order's lines for a provider's checkout page (Stripe, PayPal): each at what it costs after its
 * discounts, per unit when that is a whole cent, else as one line of its quantity. The adapters send
 * them only when they add up to the payment's amount.
 */
function chargeLinesOf(order: OrderItem): ChargeLine[] {
  return order.packages.map((line) => {
    const cents = Math.round(line.total * 100);
    return cents % line.quantity === 0
      ? { name: line.name, quantity: line.quantity, unit_price: cents / line.quantity / 100 }
      : { name: `${line.name} x ${line.quantity}`, quantity: 1, unit_price: line.total };
  });
}

/** The provider's create call (`create:<payment id>`), then PENDING + the provider ref in one transaction. */
async function charge(choice: PaymentChoice, order: OrderItem, payment: PaymentRecord, apiBase: string): Promise<PaymentRecord> {
  const { account } = choice;
  const [credentials, keys] = await Promise.all([providerCredentials(account), serverKeys()]);
  // A rotation of the server secret under way: the notify URL sent below stays derivable after it.
  await carryNotifyKey(account, keys);
  let created;
  try {
    created = await (await providerAdapter(account, apiBase)).createCharge(credentials, {
      payment: { id: payment.id, gateway: payment.gateway, amount: payment.amount, currency: payment.currency, expires_at: payment.expires_at },
      order: {
        id: order.id,
        internal_id: order.internal_id,
        description: `${choice.store.name} #${order.id}`,
        payer: { email: order.client_email, name: order.client_name, document: order.checkout?.client_document ?? null },
      },
      lines: chargeLinesOf(order),
      notificationUrl: accountNotificationUrl(account, keys, apiBase),
      returnUrl: choice.returnUrl,
    });
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    await recordCanceled(choice, order, payment, account.account_id);
    throw new ChargeFailed(error);
  }
  const now = currentTimeMs();
  let next = chargeCreated(payment, created, now);
  if (created.snapshot) {
    // The create call's own word on the payment goes through the rules like any report (rule 2 binds it); settling money is the notification's.
    const decision = settle({
      payment: next,
      order: orderView(order),
      accountId: account.account_id,
      chargebackOn: choice.store.payments.chargeback_on,
      report: { kind: 'provider', snapshot: created.snapshot },
      source: 'CHECKOUT',
      now,
    });
    if (decision.order.length === 0 && !decision.cancelAtProvider) next = decision.payment;
  }
  await storeCreatedCharge(next, payment.revision);
  return next;
}

/** The other live payments a new gateway replaces: CANCELED here, and at their provider (best effort). */
async function cancelReplaced(choice: PaymentChoice, order: OrderItem, replaced: readonly PaymentRecord[], apiBase: string): Promise<void> {
  for (const payment of replaced) {
    const account = payment.provider === choice.account.provider ? choice.account : await readProviderAccount(order.store_id, payment.provider);
    await recordCanceled(choice, order, payment, account?.account_id ?? null);
    if (!account || payment.provider_ref === null) continue;
    try {
      await (await providerAdapter(payment, apiBase)).cancel(await providerCredentials(account), payment);
    } catch (error) {
      // Best effort: the payment is CANCELED here; money that still arrives is PAID with UNFULFILLED or DUPLICATE (rule 4).
      console.warn(JSON.stringify({ message: 'a replaced payment could not be canceled at its provider', payment_id: payment.id, error: (error as Error).message }));
    }
  }
}

/**
 * The payment of `choice.gateway` for a PENDING order: the live one of that gateway if there is
 * one (`created: false`), else a new one (`created: true`) that replaces the order's other live
 * payments. However many requests race, one payment is created (lib/db/payment.ts `startPayment`).
 * ChargeFailed when the provider refused or could not be reached.
 */
export async function paymentForOrder(choice: PaymentChoice, order: OrderItem, apiBase: string): Promise<{ payment: PaymentRecord; created: boolean }> {
  let created = false;
  const payment = await retrying(async () => {
    const payments = await orderPayments(order.store_id, order.id);
    const start = paymentStart(payments, choice.gateway);
    if (start.kind === 'existing') return start.payment.status === 'CREATED' ? charge(choice, order, start.payment, apiBase) : start.payment;
    const now = currentTimeMs();
    const { payment: fresh } = newPayment(
      {
        id: newPaymentId(),
        store_id: order.store_id,
        order_id: order.id,
        gateway: choice.gateway,
        amount: order.total,
        currency: choice.store.currency,
        expires_at: expiryOf(choice, now),
      },
      now,
    );
    await startPayment(fresh, payments.length);
    created = true;
    const charged = await charge(choice, order, fresh, apiBase);
    await cancelReplaced(choice, order, start.replaces, apiBase);
    return charged;
  });
  return { payment, created };
}

export const chargeFailedAnswer = (failed: ChargeFailed) =>
  providerUnavailable(`${failed.providerError.provider} did not take the payment; ${failed.providerError.failure === 'unavailable' ? 'it could not be reached' : 'it refused it'}`);

/**
 * `POST /webstore/order/{internal_id}/payment`: the order (404, another store's included), PENDING
 * (409), then the gateway and return_url (422), then the payment: `created` false when the live
 * payment of that gateway answers. The provider refusing or unreachable is 502; the order stays
 * PENDING (the buyer may choose again).
 */
export async function requestOrderPayment(storeId: number, internalId: string, body: OrderPaymentBody, apiBase: string) {
  const order = await getOrderItemByInternalId(storeId, internalId);
  if (order.status !== 'PENDING') throw conflict(`The order is ${order.status}: only a PENDING order takes a payment`);
  const choice = await choosePayment(storeId, body.gateway, body.return_url);
  try {
    const { payment, created } = await paymentForOrder(choice, order, apiBase);
    return { created, answer: paymentAnswer(payment) };
  } catch (error) {
    throw error instanceof ChargeFailed ? chargeFailedAnswer(error) : error;
  }
}

/** A buyer's answer: the payment, and its fields as the real system's clients read them. */
export const paymentAnswer = (payment: PaymentRecord) => ({
  payment: paymentResponse(payment),
  pix_code: payment.pix_code,
  qr_code: payment.qr_code,
  expires_at: payment.expires_at,
  checkout_url: payment.checkout_url,
});
