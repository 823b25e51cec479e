import * as v from 'valibot';
import { idString } from '#lib/schemas/common.ts';

/**
 * The vocabulary of payments (extensions section 13), shared by the pure rules (lib/domain/payment.ts)
 * and the provider adapters (lib/payments/): both sit above this layer and neither sees the other.
 */

export const PROVIDERS = ['mercadopago', 'stripe', 'paypal', 'test'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The gateway codes buyers choose (the codes the real system's clients send) and the provider behind each. */
export const GATEWAY_PROVIDER = {
  PIX: 'mercadopago',
  MERCADOPAGO: 'mercadopago',
  STRIPE: 'stripe',
  PAYPAL: 'paypal',
  TEST: 'test',
} as const satisfies Record<string, Provider>;
export type Gateway = keyof typeof GATEWAY_PROVIDER;
export const GATEWAYS = Object.keys(GATEWAY_PROVIDER) as Gateway[];

export const PAYMENT_STATUSES = ['CREATED', 'PENDING', 'FAILED', 'EXPIRED', 'CANCELED', 'PAID', 'REFUNDED', 'CHARGEBACK'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const PAYMENT_ATTENTIONS = ['DUPLICATE', 'UNFULFILLED', 'MISMATCH', 'PARTIAL_REFUND', 'DISPUTE_OPEN', 'DISPUTE_WON'] as const;
export type PaymentAttention = (typeof PAYMENT_ATTENTIONS)[number];

export const PAYMENT_SOURCES = ['CHECKOUT', 'NOTIFICATION', 'POLL', 'SYNC', 'RECONCILER', 'OPERATOR'] as const;
export type PaymentSource = (typeof PAYMENT_SOURCES)[number];

export const CHARGEBACK_ON = ['DISPUTE_OPENED', 'DISPUTE_LOST'] as const;
export type ChargebackOn = (typeof CHARGEBACK_ON)[number];

/** Where a dispute stands. OPEN comes before either outcome; an outcome is final. */
export type DisputeStage = 'OPEN' | 'WON' | 'LOST';

/**
 * A provider's payment as an adapter fetched it, normalized. Only this (never a notification's
 * body) is acted on, and only once it is bound to the payment (reference, amount, currency, account).
 */
export interface ProviderSnapshot {
  /** The provider's own id of the thing fetched (a Mercado Pago payment id, a TEST payment id). */
  provider_ref: string;
  /** Our payment id as the provider carries it back (`external_reference`), or null when it carries none. */
  reference: string | null;
  /** The provider account the money went to (Mercado Pago `collector_id`), or null when the answer names none. */
  account: string | null;
  /** Whole minor units (cents): providers answer decimals, compared exactly only as integers. */
  amount_cents: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** Where the provider says the money is. REFUNDED and CHARGEBACK mean it was paid first. */
  status: 'PENDING' | 'FAILED' | 'EXPIRED' | 'CANCELED' | 'PAID' | 'REFUNDED' | 'CHARGEBACK';
  /** Refunded so far, whole minor units (a full refund equals amount_cents). */
  refunded_cents: number;
  dispute: DisputeStage | null;
  /** When the provider says the money arrived, or null. */
  paid_at: string | null;
  /**
   * The buyer approved and the money waits for our capture (a PayPal order `APPROVED`): the flow
   * calls `adapter.capture` while the payment is live. Absent for providers that capture themselves.
   */
  capturable?: boolean;
}

/** One entry of a payment's history (its last 20 transitions). */
export const paymentTransition = v.object({
  at: v.string(),
  from: v.picklist(PAYMENT_STATUSES),
  to: v.picklist(PAYMENT_STATUSES),
  source: v.picklist(PAYMENT_SOURCES),
});
export type PaymentTransition = v.InferOutput<typeof paymentTransition>;

/** The buttons of the TEST gateway's page, in the order shown (lib/payments/test-gateway.ts `testGatewayAction`). */
export const TEST_ACTIONS = ['pay', 'fail', 'cancel', 'refund', 'dispute', 'win', 'lose'] as const;

/** The TEST gateway (lib/payments/test-gateway.ts): a charge as the pretend provider keeps it (lib/db/test-charge.ts stores it). */
export type TestChargeStatus = 'PENDING' | 'PAID' | 'FAILED' | 'CANCELED' | 'REFUNDED' | 'CHARGEBACK';

/** A TEST charge as the pretend provider keeps it. Amounts in whole cents, as providers' answers are compared. */
export interface TestCharge {
  /** `tst_<payment id>`: one charge per payment, so a repeated create finds the first. */
  ref: string;
  /** Our payment id (`external_reference` of this provider). */
  reference: string;
  account: string;
  amount_cents: number;
  currency: string;
  status: TestChargeStatus;
  refunded_cents: number;
  dispute: DisputeStage | null;
  paid_at: string | null;
  expires_at: string | null;
  notification_url: string | null;
  return_url: string | null;
  created_at: string;
  updated_at: string;
}

/** Which part of rule 2's binding failed. */
export type BindingPart = 'reference' | 'amount' | 'currency' | 'account';

/** How a paid payment stands to its order, decided the first time it is seen paid, and kept. */
export const ORDER_ROLES = ['ORDER', 'DUPLICATE', 'UNFULFILLED'] as const;
export type OrderRole = (typeof ORDER_ROLES)[number];

/** A payment as the rules see it (the stored item minus its keys). Amounts in the store's currency, 2 decimals. */
export interface PaymentRecord {
  id: string;
  store_id: number;
  order_id: number;
  gateway: Gateway;
  provider: Provider;
  status: PaymentStatus;
  amount: number;
  currency: string;
  /** The provider object created for it (a Mercado Pago PIX payment id, a Checkout Pro preference id). */
  provider_ref: string | null;
  /** The provider's id of the money movement that paid it (the Mercado Pago payment): what a refund targets. */
  charge_ref: string | null;
  pix_code: string | null;
  qr_code: string | null;
  checkout_url: string | null;
  expires_at: string | null;
  paid_at: string | null;
  refunded_amount: number;
  attention: PaymentAttention | null;
  /** Which binding part failed (`reference`, `amount`, `currency`, `account`), for the operator. */
  mismatch: BindingPart | null;
  dispute: DisputeStage | null;
  order_role: OrderRole | null;
  history: PaymentTransition[];
  /** Raised by every change: the condition of the write that stores a decision. */
  revision: number;
  created_at: string;
  updated_at: string;
}

/** The providers whose notifications this build receives (`POST /v1/payment/notify/{provider}/{notify_key}`). */
export const NOTIFYING_PROVIDERS = ['mercadopago', 'stripe', 'paypal', 'test'] as const satisfies readonly Provider[];

/** A notification's body is at most this many bytes (section 13). */
export const NOTIFY_BODY_MAX_BYTES = 256 * 1024;

const notifyQueryValue = v.optional(v.pipe(v.string(), v.maxLength(200)));

export const paymentNotifyParams = v.object({
  provider: v.picklist(NOTIFYING_PROVIDERS, `provider must be one of ${NOTIFYING_PROVIDERS.join(', ')}`),
  // The key is 43 base64url characters; anything else names no account (404 from the look-up, never a 422 that tells the shape).
  notifyKey: v.pipe(v.string(), v.maxLength(200)),
});

/** What providers put in the query string: Mercado Pago's `data.id` and `type` (webhooks) or `id` and `topic` (IPN). */
export const paymentNotifyQuery = v.object({
  'data.id': notifyQueryValue,
  type: notifyQueryValue,
  id: notifyQueryValue,
  topic: notifyQueryValue,
  source_news: notifyQueryValue,
});

export const paymentNotifyResource = v.object({
  /** `processed`: a payment was settled (or found already settled); `ignored`: nothing this store knows, or a topic payments do not use. */
  outcome: v.picklist(['processed', 'ignored']),
});

/** A payment as the operator and the buyer read it (section 13). */
export const paymentResource = v.object({
  id: v.string(),
  order_id: v.number(),
  gateway: v.picklist(GATEWAYS),
  provider: v.picklist(PROVIDERS),
  status: v.picklist(PAYMENT_STATUSES),
  amount: v.number(),
  currency: v.string(),
  provider_ref: v.nullable(v.string()),
  pix_code: v.nullable(v.string()),
  qr_code: v.nullable(v.string()),
  checkout_url: v.nullable(v.string()),
  expires_at: v.nullable(v.string()),
  paid_at: v.nullable(v.string()),
  refunded_amount: v.number(),
  attention: v.nullable(v.picklist(PAYMENT_ATTENTIONS)),
  created_at: v.string(),
  updated_at: v.string(),
});
export type PaymentResource = v.InferOutput<typeof paymentResource>;

/** A redirect checkout's `return_url`, at most this many characters (lib/domain/payment-checkout.ts `returnUrlAllowed` checks the rest). */
export const RETURN_URL_MAX = 2048;

/** What a buyer's payment request adds to its answer: the payment, and its fields as the real system's clients read them. */
export const paymentAnswerEntries = {
  payment: paymentResource,
  /** PIX: the copy-and-paste code. */
  pix_code: v.nullable(v.string()),
  /** PIX: the QR image, base64 PNG. */
  qr_code: v.nullable(v.string()),
  expires_at: v.nullable(v.string()),
  /** The provider's (or the TEST gateway's) page for the others. */
  checkout_url: v.nullable(v.string()),
};

/** The body of a request for a payment: the gateway chosen, and where a redirect checkout returns the buyer. */
export const returnUrl = v.optional(
  v.nullable(v.pipe(v.string('return_url must be a string'), v.maxLength(RETURN_URL_MAX, `return_url must be at most ${RETURN_URL_MAX} characters`))),
  null,
);

/** A payment as the operator reads it among its order's payments: with its last 20 transitions. */
export const paymentWithHistoryResource = v.object({ ...paymentResource.entries, history: v.array(paymentTransition) });

/** `POST /app/order/{id}/refund` (sections 10 and 13): `at_provider: false` records a refund made elsewhere (the provider's dashboard) without asking the provider. */
export const orderRefundBody = v.strictObject({
  at_provider: v.optional(v.boolean('at_provider must be true or false'), true),
});
export type OrderRefundBody = v.InferOutput<typeof orderRefundBody>;

export const orderPaymentParams = v.object({ orderId: idString, paymentId: v.pipe(v.string(), v.regex(/^pay_[A-Za-z0-9_-]{1,64}$/)) });
