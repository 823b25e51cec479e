import * as v from 'valibot';
import type { CommandStage } from '#lib/schemas/package.ts';
import { maxBytes, pageQueryEntries, queryInt, text, timestamp, timestampInput } from '#lib/schemas/common.ts';

export const ORDER_STATUSES = ['PENDING', 'APPROVED', 'CANCELED', 'REFUNDED', 'CHARGEBACK'] as const;
/**
 * The order's creating TransactWrite (at most 100 items) holds the order, its internal_id
 * sentinel, the coupon and its two per-client counters, and one existence check per package.
 */
export const ORDER_PACKAGES_MAX = 50;
export const QUANTITY_MAX = 1000;
export const ORDER_VARIABLES_MAX = 50;
/**
 * An order's variable values together, as JSON (`[{name, value}, ...]`): 50 values of 255 ASCII
 * characters fit (about 16,250 bytes). Every queued command carries them (its `order`), and an
 * approval puts up to 98 commands in one transaction: 98 x 16 KB plus 256 KB of rendered
 * commands stays far below the transaction's 4 MB, where 255 characters of 3-byte UTF-8 would not.
 */
export const ORDER_VALUES_BYTES_MAX = 16 * 1024;
export const VARIABLE_VALUE_MAX = 255;
export const CLIENT_FIELD_MAX = 255;
export const EMAIL_MAX = 254;
export const REF_CODE_MAX = 32;
export const COUPON_INPUT_MAX = 50;

export const positiveId = (name: string) => v.pipe(v.number(`${name} must be a number`), v.safeInteger(`${name} must be an integer`), v.minValue(1, `${name} must be at least 1`));

export const quantity = v.pipe(
  v.number('quantity must be a number'),
  v.integer('quantity must be a whole number'),
  v.minValue(1, 'quantity must be at least 1'),
  v.maxValue(QUANTITY_MAX, `quantity must be at most ${QUANTITY_MAX}`),
);

const orderLine = v.strictObject({ package_id: positiveId('package_id'), quantity });

/** Reports a repeated key on the repeated item's own field, so the 422 points at it. */
export function noRepeat<T extends Record<string, unknown>>(field: keyof T & string, normalise: (value: unknown) => string, what: string) {
  return v.rawCheck<T[]>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Set<string>();
    dataset.value.forEach((item, index) => {
      const key = normalise(item[field]);
      if (seen.has(key)) {
        addIssue({
          message: `${what} ${String(item[field])} appears more than once`,
          path: [
            { type: 'array', origin: 'value', input: dataset.value, key: index, value: item },
            { type: 'object', origin: 'value', input: item, key: field, value: item[field] },
          ],
        });
      }
      seen.add(key);
    });
  });
}

const packages = v.pipe(
  v.array(orderLine, 'packages must be an array of {package_id, quantity}'),
  v.minLength(1, 'packages must hold at least one package'),
  v.maxLength(ORDER_PACKAGES_MAX, `packages may hold at most ${ORDER_PACKAGES_MAX} packages`),
  noRepeat<{ package_id: number; quantity: number }>('package_id', String, 'package_id'),
);

const variable = v.strictObject({
  name: text('variable name', 50),
  value: text('variable value', VARIABLE_VALUE_MAX),
});

const variables = v.pipe(
  maxBytes(
    'variables',
    ORDER_VALUES_BYTES_MAX,
    v.pipe(v.array(variable, 'variables must be an array of {name, value}'), v.maxLength(ORDER_VARIABLES_MAX, `variables may hold at most ${ORDER_VARIABLES_MAX} values`)),
  ),
  noRepeat<{ name: string; value: string }>('name', (name) => String(name).toLowerCase(), 'variable'),
);

export const email = v.pipe(
  v.string('client_email must be a string'),
  v.trim(),
  v.minLength(1, 'client_email is required'),
  v.maxLength(EMAIL_MAX, `client_email must be at most ${EMAIL_MAX} characters`),
  v.email('client_email must be an e-mail address'),
);

export const refCode = v.pipe(text('ref_code', REF_CODE_MAX), v.regex(/^[A-Za-z0-9_-]+$/, 'ref_code may contain only letters, digits, - and _'));

export const orderCreateBody = v.strictObject({
  client_identifier: text('client_identifier', CLIENT_FIELD_MAX),
  client_email: email,
  client_name: text('client_name', CLIENT_FIELD_MAX),
  client_social: v.optional(v.nullable(text('client_social', CLIENT_FIELD_MAX)), null),
  packages,
  variables: v.optional(variables, () => []),
  coupon: v.optional(v.nullable(text('coupon', COUPON_INPUT_MAX)), null),
  ref_code: v.optional(v.nullable(refCode), null),
});

/** A line's pricing breakdown (section 8), in the Quote's items and the Order's packages alike. */
export const lineBreakdown = {
  /** Per unit: the SELECT options chosen for variables that apply to the package. */
  options_price: v.number(),
  subtotal: v.number(),
  promo_discount: v.number(),
  promo_id: v.nullable(v.number()),
  coupon_discount: v.number(),
  total: v.number(),
};

export const orderVariableResource = v.object({ name: v.string(), value: v.string() });

/** A line as sold, with its share of the pricing breakdown (section 8): `total` = `subtotal` - `promo_discount` - `coupon_discount`. */
export const orderPackageResource = v.object({
  package_id: v.number(),
  name: v.string(),
  /** The package's unit price when sold. */
  price: v.number(),
  quantity: v.number(),
  ...lineBreakdown,
  /** The line's own checkout values (a storefront cart line's `fields`); the order-level ones are the order's `variables`. */
  variables: v.array(orderVariableResource),
  /** When a timed package (`expiry_days`) runs out: the approval + expiry_days days; null without expiry_days or before approval. */
  expires_at: v.nullable(timestamp),
});

export const orderResource = v.object({
  id: v.number(),
  store_id: v.number(),
  internal_id: v.string(),
  status: v.picklist(ORDER_STATUSES),
  subtotal: v.number(),
  promo_discount: v.number(),
  coupon_discount: v.number(),
  /** promo_discount + coupon_discount */
  discount: v.number(),
  total: v.number(),
  client_identifier: v.string(),
  client_email: v.string(),
  client_name: v.string(),
  client_social: v.nullable(v.string()),
  packages: v.array(orderPackageResource),
  variables: v.array(orderVariableResource),
  /** The coupon's code as the store wrote it (null without a coupon). */
  coupon: v.nullable(v.string()),
  ref_code: v.nullable(v.string()),
  approved_at: v.nullable(timestamp),
  canceled_at: v.nullable(timestamp),
  /** Set by the refund (status REFUNDED); one timestamp per status, like approved_at and canceled_at. */
  refunded_at: v.nullable(timestamp),
  chargeback_at: v.nullable(timestamp),
  /** The payment that paid it (extensions section 13): null while unpaid, and for an order approved by hand with no payment. */
  payment_id: v.nullable(v.string()),
  /** That payment's gateway (`PIX`, `MERCADOPAGO`, `STRIPE`, `PAYPAL`, `TEST`), and when its money arrived. */
  gateway: v.nullable(v.string()),
  paid_at: v.nullable(timestamp),
  created_at: timestamp,
  updated_at: timestamp,
});

export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 200;
/** An issued cursor is about 120 characters; anything much longer was not issued here (400). */
export const CURSOR_MAX = 512;

/**
 * Page mode (`page`, `limit`) or, when `page_cursor` is present (empty on the first call),
 * cursor mode (`page_size`); the filters work in both and combine (lib/db/order-list.ts says which
 * index answers each combination). In cursor mode `page`/`limit` are ignored.
 */
export const orderListQuery = v.pipe(
  v.object({
    ...pageQueryEntries(),
    page_cursor: v.optional(v.string()),
    page_size: v.optional(queryInt('page_size', PAGE_SIZE_MAX), String(PAGE_SIZE_DEFAULT)),
    status: v.optional(v.picklist(ORDER_STATUSES, `status must be one of ${ORDER_STATUSES.join(', ')}`)),
    from: v.optional(timestampInput),
    to: v.optional(timestampInput),
    package: v.optional(queryInt('package', Number.MAX_SAFE_INTEGER)),
    /** The client e-mail, ignoring case (a buyer's orders, guest orders under that e-mail included). */
    email: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1, 'email must not be empty'),
        v.maxLength(EMAIL_MAX, `email must be at most ${EMAIL_MAX} characters`),
        v.email('email must be an e-mail address'),
        v.toLowerCase(),
      ),
    ),
    /** The client identifier exactly as the order holds it (case counts: it names an account in the game). */
    client_identifier: v.optional(text('client_identifier', CLIENT_FIELD_MAX)),
  }),
  v.forward(
    v.check((query) => !query.from || !query.to || query.from <= query.to, 'from must not be after to'),
    ['to'],
  ),
);

export const orderCursorPage = v.object({
  data: v.array(orderResource),
  next_cursor: v.pipe(
    v.nullable(v.string()),
    v.description(
      'Send as page_cursor for the next page; null on the last page. With the package filter a page may hold fewer than page_size orders, even none, and still carry a cursor (at most 1000 orders are examined per page).',
    ),
  ),
});

export const resendResource = v.object({ order_id: v.number(), resent: v.number() });

export type OrderCreate = v.InferOutput<typeof orderCreateBody>;
export type Order = v.InferOutput<typeof orderResource>;
/** A line as stored: `expires_at` is written by the approval (absent before it, and on orders approved before timed packages). */
export type OrderPackageLine = Omit<v.InferOutput<typeof orderPackageResource>, 'expires_at'> & { expires_at?: string | null };
export type OrderVariable = v.InferOutput<typeof orderVariableResource>;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export type OrderListQuery = v.InferOutput<typeof orderListQuery>;
export type OrderFilters = Pick<OrderListQuery, 'status' | 'from' | 'to' | 'package' | 'email' | 'client_identifier'>;
export type OrderCursorPage = v.InferOutput<typeof orderCursorPage>;

/** A command of the order, rendered when the order is placed (all it depends on is known then). */
export interface Delivery {
  package_id: number;
  command: string;
  offline_execute: boolean;
  delay_seconds: number;
  /** Absent on orders placed before servers and stages existed: any server, APPROVED. */
  servers?: number[] | null;
  stage?: CommandStage;
}

/**
 * The order as stored: lines as stored, and the timestamps of later statuses absent until they
 * happen; what its payment writes later (`payment_id`, `gateway`, `paid_at`) is the stored item's
 * own (lib/db/order.ts `OrderItem`).
 */
export type StoredOrder = Omit<Order, 'packages' | 'refunded_at' | 'chargeback_at' | 'payment_id' | 'gateway' | 'paid_at'> & {
  packages: OrderPackageLine[];
  refunded_at?: string | null;
  chargeback_at?: string | null;
};

/**
 * A placed order as the order rules draft it (lib/domain/order.ts) and lib/db/order.ts stores
 * it: the answer, plus what the package filter, the approval and the coupon release read later.
 */
export interface PlacedOrder extends StoredOrder {
  package_ids: number[];
  deliveries: Delivery[];
  /** The coupon's discount id (null without a coupon), for the release on cancel. */
  discount_id: number | null;
  /**
   * What the order holds, so that a cancel (or a later refund) gives back exactly that: units
   * taken from packages with a limited stock, and units counted against per-customer limits
   * (under the lower-case client_email).
   */
  stock_reserved: Reserved[];
  limit_reserved: Reserved[];
  /** The packages sold with `expiry_days` (absent on orders placed before timed packages). */
  expiry_days?: { package_id: number; days: number }[];
  /** What a storefront checkout adds (null for an operator's order); `gateway` and `terms` wait for the payment step. */
  checkout: CheckoutExtras | null;
}

export interface Reserved {
  package_id: number;
  units: number;
}

export interface CheckoutExtras {
  client_document: string | null;
  client_phone: string | null;
  gateway: string | null;
  terms: boolean | null;
  /** The buyer logged in when the order was placed (null: a guest). */
  customer_id: number | null;
}
