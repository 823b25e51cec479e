import { currentTimeMs } from '#lib/clock.ts';
import { hashSecret } from '#lib/crypto.ts';
import { paymentById, paymentByRef } from '#lib/db/payment.ts';
import { notifyKeyTarget, readProviderAccount } from '#lib/db/payment-provider.ts';
import { HttpError, notFound } from '#lib/errors.ts';
import { type AdapterOwner, notificationSecretOf, providerAdapter, providerCredentials } from '#lib/flows/payment-adapters.ts';
import { settlePayment } from '#lib/flows/payment-settle.ts';
import { ProviderError, type NotificationInput } from '#lib/payments/adapter.ts';
import type { Provider, ProviderSnapshot } from '#lib/schemas/payment.ts';

/*
 * A provider's notification (`POST /v1/payment/notify/{provider}/{notify_key}`, extensions section
 * 13): never acted on itself, only a hint of what to fetch.
 *
 * | step                                   | calls                                                       |
 * |----------------------------------------|-------------------------------------------------------------|
 * | the notify key (404 before any decryption) | GetItem `PAYMENT_NOTIFY_KEY#<sha256>`                   |
 * | the account, its secrets opened        | GetItem account + one KMS Decrypt                           |
 * | the signature (401, nothing fetched)   | none                                                        |
 * | each id named: its payment             | GetItem ref sentinel + GetItem payment (none when unknown)  |
 * | fetch at the provider                  | one provider GET                                            |
 * | settle (lib/flows/payment-settle.ts)   | GetItem order + store (the payment just read), then the decision's write |
 *
 * Answers: `processed` (settled, or the state was already known), `ignored` (a topic payments do
 * not use, an id the store does not know); 401 a missing or wrong signature; 404 an unknown key;
 * 503 + Retry-After when the provider cannot be asked (the provider sends again later) or the
 * table fails (lib/http/handler.ts answers that one).
 */

/** How long a provider should wait before sending again when we could not ask it. */
export const NOTIFY_RETRY_AFTER_S = 60;

export interface ReceivedNotification {
  provider: Provider;
  notifyKey: string;
  /** The body exactly as received. */
  rawBody: string;
  headers: NotificationInput['headers'];
  query: NotificationInput['query'];
  apiBase: string;
}

const providerDown = () =>
  new HttpError(
    503,
    { message: 'The payment provider could not be asked; send the notification again', code: 'PROVIDER_UNAVAILABLE' },
    { 'retry-after': String(NOTIFY_RETRY_AFTER_S) },
  );

export async function receiveNotification(notification: ReceivedNotification): Promise<{ outcome: 'processed' | 'ignored' }> {
  const { provider, apiBase } = notification;
  const target = await notifyKeyTarget(hashSecret(notification.notifyKey));
  if (!target || target.provider !== provider) throw notFound('Notification URL');
  const storeId = target.store_id;
  const account = await readProviderAccount(storeId, provider);
  if (!account) throw notFound('Notification URL');
  const credentials = await providerCredentials(account);
  const adapter = await providerAdapter(account, apiBase);
  const check = await adapter.verifyNotification({
    rawBody: notification.rawBody,
    headers: notification.headers,
    query: notification.query,
    secret: notificationSecretOf(provider, credentials),
    now: currentTimeMs(),
  });
  if (check.outcome === 'refused') throw new HttpError(401, { message: 'Missing or invalid notification signature', code: 'UNAUTHENTICATED' });
  if (check.outcome === 'ignored') return { outcome: 'ignored' };
  let settled = 0;
  try {
    for (const ref of check.refs) {
      const known = await paymentByRef(storeId, provider, ref);
      // Hint-only mode (no webhook secret): only payments the store already knows may be fetched.
      if (!known && check.outcome === 'hint') continue;
      const snapshot = await fetchNamed(account, apiBase, credentials, ref);
      if (!snapshot) continue;
      // A payment the store never named this object for (a Checkout Pro payment): found by the reference it carries back.
      const payment = known ?? (snapshot.reference ? await paymentById(storeId, provider, snapshot.reference) : undefined);
      if (!payment) continue;
      await settlePayment({
        storeId,
        orderId: payment.order_id,
        paymentId: payment.id,
        source: 'NOTIFICATION',
        learn: { ask: 'snapshot', snapshot },
        apiBase,
        provider: { account, credentials },
        read: payment,
      });
      settled += 1;
    }
  } catch (error) {
    if (error instanceof ProviderError) throw providerDown();
    throw error;
  }
  return { outcome: settled > 0 ? 'processed' : 'ignored' };
}

/** The provider's state of the object a notification named, or undefined when the provider knows no such object of this account. */
async function fetchNamed(
  account: AdapterOwner,
  apiBase: string,
  credentials: Awaited<ReturnType<typeof providerCredentials>>,
  ref: string,
): Promise<ProviderSnapshot | undefined> {
  try {
    return await (await providerAdapter(account, apiBase)).fetch(credentials, ref);
  } catch (error) {
    if (error instanceof ProviderError && error.failure === 'not_found') return undefined;
    throw error;
  }
}
