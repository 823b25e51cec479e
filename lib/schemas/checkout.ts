import * as v from 'valibot';
import { maxBytes, queryInt, text, timestamp } from '#lib/schemas/common.ts';
import { paymentAnswerEntries, returnUrl } from '#lib/schemas/payment.ts';
import {
  CLIENT_FIELD_MAX,
  COUPON_INPUT_MAX,
  CURSOR_MAX,
  email,
  lineBreakdown,
  noRepeat,
  ORDER_PACKAGES_MAX,
  ORDER_VALUES_BYTES_MAX,
  ORDER_VARIABLES_MAX,
  orderResource,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  positiveId,
  quantity,
  refCode,
  VARIABLE_VALUE_MAX,
  ORDER_STATUSES,
} from '#lib/schemas/order.ts';

/**
 * The storefront's cart, quote and checkout (extensions section 8), and the buyer's view of
 * their orders. The shapes follow the official in-game store client, which sends more fields
 * than these (its own user id, for one): bodies are `v.object`, so unknown fields are dropped,
 * while a known field with a wrong value is a 422 as everywhere.
 */
export const QUOTE_TTL_SECONDS = 15 * 60;
export const DOCUMENT_MAX = 32;
export const PHONE_MAX = 32;
export const GATEWAY_MAX = 50;
/** A quote id is 22 characters (128 random bits); anything longer names no quote. */
export const QUOTE_ID_MAX = 64;

/**
 * `{<variable name>: value}`; a NUMBER variable's value may come as a JSON number. Each record
 * is bounded like an order's `variables`; the values of the whole cart joined are held to the
 * same bounds by the cart rules (lib/domain/cart.ts `joinFields`).
 */
const fields = maxBytes(
  'fields',
  ORDER_VALUES_BYTES_MAX,
  v.pipe(
    v.record(
      v.pipe(v.string(), v.minLength(1, 'a field name is required'), v.maxLength(50, 'a field name is at most 50 characters')),
      v.union([text('field value', VARIABLE_VALUE_MAX), v.pipe(v.number(), v.finite(), v.transform(String))], 'a field value must be a string or a number'),
      'fields must be an object of {<variable name>: value}',
    ),
    v.maxEntries(ORDER_VARIABLES_MAX, `fields may hold at most ${ORDER_VARIABLES_MAX} values`),
  ),
);

const cartLine = v.object({ package_id: positiveId('package_id'), quantity, fields: v.optional(fields) });

const cart = v.pipe(
  v.array(cartLine, 'cart must be an array of {package_id, quantity, fields?}'),
  v.minLength(1, 'cart must hold at least one package'),
  v.maxLength(ORDER_PACKAGES_MAX, `cart may hold at most ${ORDER_PACKAGES_MAX} packages`),
  // One line per package: its stock and limit are reserved by one write of the order's transaction.
  noRepeat<v.InferOutput<typeof cartLine>>('package_id', String, 'package_id'),
);

const optionalText = (name: string, max: number) => v.optional(v.nullable(text(name, max)), null);

const cartEntries = {
  cart,
  fields: v.optional(fields, () => ({})),
  coupon: optionalText('coupon', COUPON_INPUT_MAX),
  ref_code: v.optional(v.nullable(refCode), null),
};

const terms = v.optional(v.nullable(v.boolean('terms must be a boolean')), null);

export const quoteBody = v.object({
  ...cartEntries,
  /** The buyer accepted the store's terms: required true when the store has a terms_url. */
  terms,
  client_email: v.optional(v.nullable(email), null),
  client_identifier: optionalText('client_identifier', CLIENT_FIELD_MAX),
});

export const checkoutBody = v.object({
  ...cartEntries,
  quote_id: v.optional(v.nullable(v.pipe(v.string('quote_id must be a string'), v.maxLength(QUOTE_ID_MAX, 'quote_id names no quote'))), null),
  client_name: text('client_name', CLIENT_FIELD_MAX),
  /** Optional only for a logged-in buyer, whose e-mail it is; a guest must send it (422). */
  client_email: v.optional(email),
  client_identifier: text('client_identifier', CLIENT_FIELD_MAX),
  client_social: optionalText('client_social', CLIENT_FIELD_MAX),
  client_document: optionalText('client_document', DOCUMENT_MAX),
  client_phone: optionalText('client_phone', PHONE_MAX),
  /** One of the store's enabled gateways (`GET /webstore/gateway`): the order's first payment is created with it (section 13). */
  gateway: optionalText('gateway', GATEWAY_MAX),
  return_url: returnUrl,
  terms,
});

/** `POST /webstore/order/{internal_id}/payment`: a payment of a PENDING order through an enabled gateway (section 13). */
export const orderPaymentBody = v.object({
  gateway: text('gateway', GATEWAY_MAX),
  return_url: returnUrl,
});
export type OrderPaymentBody = v.InferOutput<typeof orderPaymentBody>;

/** A buyer's payment: the Payment, and what the buyer pays with, as the checkout answers them. */
export const orderPaymentResource = v.object(paymentAnswerEntries);

export const quoteLine = v.object({
  package_id: v.number(),
  name: v.string(),
  quantity: v.number(),
  unit_price: v.number(),
  ...lineBreakdown,
});

export const nextTier = v.object({
  promo_id: v.number(),
  name: v.string(),
  missing: v.number(),
  reward_type: v.string(),
  reward_value: v.nullable(v.number()),
});

export const quoteResource = v.object({
  quote_id: v.string(),
  expires_at: timestamp,
  items: v.array(quoteLine),
  subtotal: v.number(),
  promo_discount: v.number(),
  coupon_discount: v.number(),
  discount: v.number(),
  total: v.number(),
  coupon: v.nullable(v.string()),
  next_tiers: v.array(nextTier),
});

/** The order a checkout placed, plus `order_id` (its internal_id) as the store client expects. */
export const checkoutResource = v.object({
  ...orderResource.entries,
  order_id: v.string(),
  // With a gateway (section 13): the order's first payment and what the buyer pays with.
  payment: v.optional(paymentAnswerEntries.payment),
  pix_code: v.optional(paymentAnswerEntries.pix_code),
  qr_code: v.optional(paymentAnswerEntries.qr_code),
  expires_at: v.optional(paymentAnswerEntries.expires_at),
  checkout_url: v.optional(paymentAnswerEntries.checkout_url),
});

export const orderStatusResource = v.object({ status: v.picklist(ORDER_STATUSES) });

/** A buyer's own order. Its own schema, so that what only a buyer sees (deliveries, section 9) is added here. */
export const buyerOrderResource = v.object({ ...orderResource.entries });

export const buyerOrderListQuery = v.object({
  page_cursor: v.optional(v.pipe(v.string(), v.maxLength(CURSOR_MAX, 'page_cursor is invalid')), ''),
  page_size: v.optional(queryInt('page_size', PAGE_SIZE_MAX), String(PAGE_SIZE_DEFAULT)),
});

export const buyerOrderPage = v.object({ data: v.array(buyerOrderResource), next_cursor: v.nullable(v.string()) });

export type QuoteBody = v.InferOutput<typeof quoteBody>;
export type CheckoutBody = v.InferOutput<typeof checkoutBody>;
export type CheckoutAnswer = v.InferOutput<typeof checkoutResource>;
export type Quote = v.InferOutput<typeof quoteResource>;
export type BuyerOrderPage = v.InferOutput<typeof buyerOrderPage>;
