import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DEMO_BUYER_EMAIL, DEMO_BUYER_NICK } from '#infra/local/seed.ts';

type Value = string | number;

/** `{{name}}` placeholders of a sample event. */
const PLACEHOLDER = /\{\{(\w+)\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{(\w+)\}\}$/;

/**
 * A lease on one of the demo server's due commands, taken by the delivery flow as a game server
 * would take it (delivery-ack acts on it moments later: a lease lives 60 s, so no file can hold
 * one). When nothing is due, the demo buyer gets an approved order whose command is.
 */
async function demoLease(storeId: number, serverId: number): Promise<{ lease_id: string; command_id: number }> {
  const v = await import('valibot');
  const { claimCommands } = await import('#lib/flows/delivery.ts');
  const { claimBody } = await import('#lib/schemas/delivery.ts');
  const claim = () => claimCommands(storeId, serverId, v.parse(claimBody, { online: [DEMO_BUYER_NICK], limit: 1, lease_seconds: 60 }));
  let claimed = await claim();
  if (!claimed.lease_id) {
    const { approveOrder, createOrder } = await import('#lib/flows/order.ts');
    const { orderCreateBody } = await import('#lib/schemas/order.ts');
    const order = await createOrder(
      storeId,
      v.parse(orderCreateBody, { client_identifier: DEMO_BUYER_NICK, client_email: DEMO_BUYER_EMAIL, client_name: DEMO_BUYER_NICK, packages: [{ package_id: 1, quantity: 1 }] }),
    );
    await approveOrder(storeId, order.id);
    claimed = await claim();
  }
  if (!claimed.lease_id) throw new Error('the demo server has no command to lease (was package 1 deleted?)');
  return { lease_id: claimed.lease_id, command_id: claimed.commands[0]!.id };
}

/** The body of payment-notify's sample (lib/routes/payment.ts): a TEST notification naming a charge the demo store does not know (200, ignored). */
export const SAMPLE_TEST_NOTIFICATION = { type: 'payment', data: { id: 'tst_sample' } };

/** The demo store's TEST account: its notify key (derived as the provider routes derive it) and its signing secret, opened. */
async function demoTestAccount(storeId: number): Promise<{ notifyKey: string; signingSecret: string }> {
  const { readProviderAccount } = await import('#lib/db/payment-provider.ts');
  const { notifyKeyUnder } = await import('#lib/flows/payment-provider-read.ts');
  const { openSecrets } = await import('#lib/payments/secrets.ts');
  const { serverKeys } = await import('#lib/server-secret.ts');
  const account = await readProviderAccount(storeId, 'test');
  if (!account) throw new Error('the demo store has no TEST gateway account');
  const secrets = await openSecrets(account.secrets_ct, { store_id: storeId, provider: 'test' });
  return { notifyKey: notifyKeyUnder((await serverKeys()).current, storeId, 'test', account.notify_nonce), signingSecret: secrets.signing_secret ?? '' };
}

/**
 * A PENDING order of the demo buyer with a TEST payment made for it (what a checkout with `gateway: TEST` makes), for the sync's
 * sample; `stray`: the order canceled and its TEST charge paid afterwards, settled UNFULFILLED (section 13 rule 4), for the
 * sample of the refund of a payment that is not the order's.
 */
async function demoPayment(storeId: number, stray = false): Promise<{ order_id: number; payment_id: string }> {
  const v = await import('valibot');
  const { createOrder } = await import('#lib/flows/order.ts');
  const { orderCreateBody } = await import('#lib/schemas/order.ts');
  const { createPayment, newPaymentId } = await import('#lib/db/payment.ts');
  const { newPayment } = await import('#lib/domain/payment.ts');
  const { testChargeLedger } = await import('#lib/db/test-charge.ts');
  const { testGatewayAdapter } = await import('#lib/payments/test-gateway.ts');
  const order = await createOrder(
    storeId,
    v.parse(orderCreateBody, { client_identifier: DEMO_BUYER_NICK, client_email: DEMO_BUYER_EMAIL, client_name: DEMO_BUYER_NICK, packages: [{ package_id: 1, quantity: 1 }] }),
  );
  const { payment } = newPayment(
    { id: newPaymentId(), store_id: storeId, order_id: order.id, gateway: 'TEST', amount: order.total, currency: 'BRL', expires_at: null },
    Date.now(),
  );
  const { signingSecret } = await demoTestAccount(storeId);
  const { testAccountOf } = await import('#lib/payments/test-gateway.ts');
  const charge = await testGatewayAdapter({ ledger: testChargeLedger, pageUrl: (ref) => ref, now: Date.now }).createCharge(
    { secrets: { signing_secret: signingSecret }, accountId: testAccountOf(signingSecret) },
    {
      payment,
      order: { id: order.id, internal_id: order.internal_id, description: 'Sample', payer: { email: DEMO_BUYER_EMAIL, name: DEMO_BUYER_NICK } },
      notificationUrl: null,
      returnUrl: null,
    },
  );
  if (!stray) {
    await createPayment({ ...payment, status: 'PENDING', provider_ref: charge.provider_ref, checkout_url: charge.checkout_url, revision: 1 });
    return { order_id: order.id, payment_id: payment.id };
  }
  const { cancelOrder } = await import('#lib/flows/order.ts');
  const { testGatewayAction } = await import('#lib/payments/test-gateway.ts');
  await cancelOrder(storeId, order.id);
  const ledgerCharge = (await testChargeLedger.get(testAccountOf(signingSecret), charge.provider_ref))!;
  const paidCharge = testGatewayAction(ledgerCharge, 'pay', Date.now())!;
  await testChargeLedger.replace(paidCharge, ledgerCharge);
  await createPayment({
    ...payment,
    status: 'PAID',
    provider_ref: charge.provider_ref,
    charge_ref: charge.provider_ref,
    checkout_url: charge.checkout_url,
    paid_at: paidCharge.paid_at,
    order_role: 'UNFULFILLED',
    attention: 'UNFULFILLED',
    revision: 1,
  });
  return { order_id: order.id, payment_id: payment.id };
}

/**
 * A sample event of events/ made runnable: its placeholders filled from the demo store
 * (<LOCAL_DIR>/demo.json, written by the seed: credentials and the targets it prepared) or the
 * environment (ACCESS_TOKEN, SESSION). What a static file cannot hold because it is single-use or
 * expires (a buyer token or a session without those two, a login code, a handoff, a delivery
 * lease) is issued for the demo store's buyer, so every event runs as is. A JSON body's value
 * that is one placeholder takes the value's type (`"{{leased_command_id}}"` becomes a number).
 * The caller has configured the environment (TABLE_NAME, endpoints) before calling.
 */
export async function runnableEvent(eventText: string, localDir: string, env: NodeJS.ProcessEnv = process.env): Promise<APIGatewayProxyEventV2> {
  const demoFile = join(localDir, 'demo.json');
  const demo: Record<string, Value | undefined> = existsSync(demoFile) ? JSON.parse(readFileSync(demoFile, 'utf8')) : {};
  const storeId = Number(demo.store_id);
  const buyer = async () => {
    const { findOrCreateCustomer } = await import('#lib/db/customer.ts');
    return findOrCreateCustomer(storeId, DEMO_BUYER_EMAIL);
  };
  /** A PENDING order of the demo buyer, made for the samples that pay one (the seed's orders are spent by other samples). */
  const pendingOrder = async () => {
    const v = await import('valibot');
    const { createOrder } = await import('#lib/flows/order.ts');
    const { orderCreateBody } = await import('#lib/schemas/order.ts');
    return createOrder(
      storeId,
      v.parse(orderCreateBody, { client_identifier: DEMO_BUYER_NICK, client_email: DEMO_BUYER_EMAIL, client_name: DEMO_BUYER_NICK, packages: [{ package_id: 1, quantity: 1 }] }),
    );
  };
  let lease: ReturnType<typeof demoLease> | undefined;
  const leased = () => (lease ??= demoLease(storeId, Number(demo.delivery_server_id)));
  let paid: ReturnType<typeof demoPayment> | undefined;
  const payment = () => (paid ??= demoPayment(storeId));
  let strayPaid: ReturnType<typeof demoPayment> | undefined;
  const strayPayment = () => (strayPaid ??= demoPayment(storeId, true));
  const issue: Record<string, () => Promise<Value | undefined>> = {
    access_token: async () => {
      const { issueBuyerAccessToken } = await import('#lib/db/credential.ts');
      return env.ACCESS_TOKEN ?? (storeId ? (await issueBuyerAccessToken(storeId, (await buyer()).id)).token : undefined);
    },
    session: async () => {
      const { issueSession } = await import('#lib/db/credential.ts');
      return env.SESSION ?? (storeId ? (await issueSession(storeId, (await buyer()).id)).sessionId : undefined);
    },
    login_code: async () => {
      const { issueLoginCode } = await import('#lib/db/login-code.ts');
      const { serverKeys } = await import('#lib/server-secret.ts');
      return storeId ? (await issueLoginCode(await serverKeys(), storeId, DEMO_BUYER_EMAIL)).code : undefined;
    },
    handoff: async () => {
      const { issueHandoffForCustomer } = await import('#lib/flows/handoff.ts');
      return storeId ? (await issueHandoffForCustomer(storeId, (await buyer()).id)).handoff : undefined;
    },
    pending_order_internal_id: async () => (storeId ? (await pendingOrder()).internal_id : undefined),
    test_charge_ref: async () => {
      if (!storeId) return undefined;
      const { requestOrderPayment } = await import('#lib/flows/payment-start.ts');
      const paid = await requestOrderPayment(
        storeId,
        (await pendingOrder()).internal_id,
        { gateway: 'TEST', return_url: null },
        env.API_BASE_URL ?? process.env.API_BASE_URL ?? 'http://localhost',
      );
      return paid.answer.payment.provider_ref ?? undefined;
    },
    lease_id: async () => (storeId ? (await leased()).lease_id : undefined),
    leased_command_id: async () => (storeId ? (await leased()).command_id : undefined),
    test_notify_key: async () => (storeId ? (await demoTestAccount(storeId)).notifyKey : undefined),
    // Signed now over the sample's body: a TEST signature is good for 5 minutes.
    test_notify_signature: async () => {
      if (!storeId) return undefined;
      const { testNotification } = await import('#lib/payments/test-gateway.ts');
      const { signingSecret } = await demoTestAccount(storeId);
      return testNotification({ ref: SAMPLE_TEST_NOTIFICATION.data.id }, signingSecret, Date.now()).headers['x-test-signature'];
    },
    payment_order_id: async () => (storeId ? (await payment()).order_id : undefined),
    payment_id: async () => (storeId ? (await payment()).payment_id : undefined),
    stray_payment_order_id: async () => (storeId ? (await strayPayment()).order_id : undefined),
    stray_payment_id: async () => (storeId ? (await strayPayment()).payment_id : undefined),
  };
  const values: Record<string, Value | undefined> = { ...demo };
  for (const [, key] of eventText.matchAll(PLACEHOLDER)) if (values[key!] === undefined && issue[key!]) values[key!] = await issue[key!]!();

  const fillText = (text: string) => text.replace(PLACEHOLDER, (match, key: string) => (values[key] === undefined ? match : String(values[key])));
  /** `typed`: inside a JSON body, where a value that is one placeholder takes the value's own type. */
  const fill = (value: unknown, typed: boolean): unknown => {
    if (typeof value === 'string') {
      const whole = typed ? WHOLE_PLACEHOLDER.exec(value) : null;
      return whole && typeof values[whole[1]!] === 'number' ? values[whole[1]!] : fillText(value);
    }
    if (Array.isArray(value)) return value.map((inner) => fill(inner, typed));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, fill(inner, typed)]));
    return value;
  };
  const { body, ...rest } = JSON.parse(eventText) as APIGatewayProxyEventV2;
  const event = fill(rest, false) as APIGatewayProxyEventV2;
  if (body === undefined || event.isBase64Encoded) return { ...event, ...(body === undefined ? {} : { body }) };
  return { ...event, body: JSON.stringify(fill(JSON.parse(body), true)) };
}

/**
 * What running a sample spends of the demo store, beyond what it says it does: samples that
 * take delivery leases, or consume a target the seed prepared for them alone (a second run may
 * find it spent). Deletions are told from the event itself.
 */
const SPENDS: Record<string, string> = {
  'delivery-claim': "takes 60-second leases on the demo server's due commands: no claim gets them again until the leases lapse",
  'delivery-ack': 'takes a 60-second lease on one due command of the demo server (making an approved order when none is due) and acks it DONE',
  'order-refund': 'refunds order 4, approved for this sample: run once, it is refunded for good',
  'order-chargeback': 'charges back order 3, approved for this sample: run once, it is charged back for good',
  'order-cancel': 'cancels order 2, pending for this sample: run once, it is canceled for good',
  'withdrawal-pay': 'pays withdrawal 5, pending for this sample: run once, it is paid for good',
  'withdrawal-reject': 'rejects withdrawal 6, pending for this sample: run once, it is rejected for good',
  'command-retry': 'puts failed command 4 back on the queue',
  'package-image-confirm': "confirms the upload the seed left unconfirmed as package 1's image",
};

/** The line `npm run invoke` prints before running a sample that spends something; undefined for the others. */
export function sampleWarning(name: string, eventText: string): string | undefined {
  const { requestContext, rawPath } = JSON.parse(eventText) as APIGatewayProxyEventV2;
  const spends = SPENDS[name] ?? (requestContext?.http?.method === 'DELETE' ? `deletes ${rawPath} of the demo store for good` : undefined);
  return spends && `npm run invoke: note: ${name} ${spends}.`;
}
