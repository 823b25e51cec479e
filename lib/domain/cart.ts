import { couponPriceRefusal, couponRefusal, type CouponRecord } from '#lib/domain/coupon.ts';
import { priceCart, type PricedCart, type PricingPromo } from '#lib/domain/pricing.ts';
import { lineValues, missingRequired, optionsPriceOf, resolveValues, type GivenValue, type ResolvedVariable } from '#lib/domain/variable.ts';
import { couponNotFound, customerUnauthenticated, HttpError, unprocessable, type ErrorDetail } from '#lib/errors.ts';
import type { LIMIT_CRITERIA } from '#lib/schemas/discount.ts';
import { jsonBytes } from '#lib/schemas/common.ts';
import { ORDER_VALUES_BYTES_MAX, ORDER_VARIABLES_MAX, type Reserved } from '#lib/schemas/order.ts';
import type { Package } from '#lib/schemas/package.ts';
import type { Variable } from '#lib/schemas/variable.ts';

/*
 * Every rule a cart must pass to become an order (section 8), in one pure function that
 * `POST /app/order`, the quote and the checkout all call, so the same cart gets the same price
 * and the same refusals everywhere: packages exist and are enabled, in stock, within the
 * per-customer limit, the variables' values, the coupon (before and after pricing), the
 * affiliate code (held by an affiliate or a link of the store), and the
 * size of the order's transaction. Every problem is collected and thrown as one 422, each with
 * the `field` of its input.
 */

/** A line as asked, with the input path its problems name (`packages.0`, `cart.0`). */
export interface AskedLine {
  package_id: number;
  quantity: number;
  field: string;
  /** The line's own variable values (a storefront cart line's `fields`): they override the order-level ones for this line only. */
  values?: readonly GivenValue[];
}

export interface CartRequest {
  lines: readonly AskedLine[];
  /** The order-level values: they apply to every line whose package the variable applies to. */
  values: readonly GivenValue[];
  /** Where a missing required variable is reported: `variables` (operator order) or `fields` (storefront). */
  valuesField: string;
  coupon: string | null;
  /** The affiliate code the order names, or null. */
  ref_code: string | null;
  client_email: string | null;
  client_identifier: string | null;
  /** Items the caller's transaction adds beyond the order's own (the checkout's unpaid due-list item). */
  extraWrites: number;
  /** A storefront buyer's `terms` (null when not sent); undefined for an operator's order, which has no terms to accept. */
  terms?: boolean | null;
  /** Problems the caller already found in the request (bounds of the fields), reported with the others. */
  inputProblems: readonly ErrorDetail[];
}

export interface CouponState {
  record: CouponRecord;
  clientUses: Record<(typeof LIMIT_CRITERIA)[number], number>;
}

/** The prices an order carries: the engine's answer without its working for the coupon rules. */
export type CartPrices = Omit<PricedCart, 'coupon_check' | 'amount_after_promos'>;

/** What the flow read for this cart. */
export interface CartState {
  catalog: ReadonlyMap<number, Package>;
  variables: readonly Variable[];
  promos: readonly PricingPromo[];
  /** The coupon asked for and this client's uses; null when none was asked or the code names none. */
  coupon: CouponState | null;
  /** Units this customer holds per package (PENDING and APPROVED orders); null when the customer is unknown (a quote without client_email). */
  held: ReadonlyMap<number, number> | null;
  /** The prices of a quote issued for this very cart (the checkout honours them), or null to price now. */
  quoted: CartPrices | null;
  /** Whether an affiliate or a link of the store holds the ref_code asked for (false when none was asked). */
  refCodeKnown: boolean;
  /** The store's terms a storefront buyer must accept (`terms: true`), or null. */
  termsUrl: string | null;
}

/** A limited package's reservation and the limit its conditional write holds it to. */
export interface LimitReservation extends Reserved {
  limit: number;
}

export interface AssessedCart {
  prices: CartPrices;
  /** The order-level values (the order's `variables`). */
  variables: ResolvedVariable[];
  /** Each line's own values, by package id (one line per package): the line's `variables`, priced and rendered for that line only. */
  lineVariables: ReadonlyMap<number, ResolvedVariable[]>;
  coupon: CouponRecord | null;
  /** Units to take from packages whose stock is limited. */
  stock: Reserved[];
  /** Units to count against per-customer limits (only when the customer is known). */
  limits: LimitReservation[];
}

/** A TransactWrite holds at most 100 items: the order, its internal_id sentinel, the list counts, one write per package, limits, coupon. */
const TRANSACTION_ITEMS_MAX = 100;
/** The use, the two per-client counters, and the status snapshot's bump when the use is the coupon's last (lib/db/coupon-use.ts). */
const COUPON_WRITES = 4;

function lineProblems(asked: AskedLine, pkg: Package | undefined, held: ReadonlyMap<number, number> | null): ErrorDetail[] {
  if (!pkg) return [{ message: `Package ${asked.package_id} does not exist in this store`, code: 'VALIDATION_FAILED', field: `${asked.field}.package_id` }];
  if (!pkg.enabled) return [{ message: `Package ${pkg.id} is not available`, code: 'PACKAGE_DISABLED', field: `${asked.field}.package_id` }];
  const problems: ErrorDetail[] = [];
  if (pkg.stock !== null && asked.quantity > pkg.stock) {
    const left = pkg.stock === 0 ? 'is out of stock' : `has only ${pkg.stock} unit(s) left`;
    problems.push({ message: `Package ${pkg.name} ${left}`, code: 'OUT_OF_STOCK', field: `${asked.field}.quantity` });
  }
  const holds = held?.get(pkg.id) ?? 0;
  if (held !== null && pkg.per_customer_limit !== null && holds + asked.quantity > pkg.per_customer_limit) {
    const room = Math.max(0, pkg.per_customer_limit - holds);
    problems.push({
      message: `Package ${pkg.name} is limited to ${pkg.per_customer_limit} unit(s) per customer; this customer may order ${room} more`,
      code: 'LIMIT_REACHED',
      field: `${asked.field}.quantity`,
    });
  }
  return problems;
}

/** The variable names a cart gives values for, order-level and per line: what its read must find besides the variables of its packages. */
export const variableNamesGiven = (request: Pick<CartRequest, 'values' | 'lines'>): string[] =>
  [...request.values, ...request.lines.flatMap((line) => line.values ?? [])].map((value) => value.name);

/** The cart's prices, variables, coupon and reservations; a 422 listing every problem otherwise. */
export function assessCart(request: CartRequest, state: CartState, now: number): AssessedCart {
  const problems: ErrorDetail[] = [...request.inputProblems];
  const found: { asked: AskedLine; pkg: Package }[] = [];
  for (const asked of request.lines) {
    const pkg = state.catalog.get(asked.package_id);
    const lineIssues = lineProblems(asked, pkg, state.held);
    problems.push(...lineIssues);
    if (pkg?.enabled) found.push({ asked, pkg });
  }
  const orderLevel = resolveValues(state.variables, request.values);
  problems.push(...orderLevel.problems);
  const valued = found.map(({ asked, pkg }) => {
    const own = resolveValues(state.variables, asked.values ?? []);
    problems.push(...own.problems);
    return { package_id: pkg.id, field: asked.field, own: own.resolved };
  });
  problems.push(...missingRequired(state.variables, orderLevel.resolved, valued, request.valuesField));

  let coupon: CouponRecord | null = null;
  if (request.coupon !== null) {
    const record = state.coupon?.record;
    const refusal = record
      ? couponRefusal(record, {
          client_email: request.client_email,
          client_identifier: request.client_identifier,
          clientUses: state.coupon!.clientUses[record.limit_criteria],
          now,
        })
      : couponNotFound(request.coupon);
    if (refusal) problems.push(...refusal.details);
    else coupon = record!;
  }

  if (request.terms !== undefined && state.termsUrl !== null && request.terms !== true) {
    problems.push({ message: `The store's terms (${state.termsUrl}) must be accepted: send terms: true`, code: 'VALIDATION_FAILED', field: 'terms' });
  }

  if (request.ref_code !== null && !state.refCodeKnown) {
    problems.push({ message: `ref_code ${request.ref_code} is not a code of this store`, code: 'REF_CODE_NOT_FOUND', field: 'ref_code' });
  }

  const cart = found.map(({ asked, pkg }, index) => ({
    package_id: pkg.id,
    name: pkg.name,
    quantity: asked.quantity,
    unit_price: pkg.price,
    options_price: optionsPriceOf(lineValues(orderLevel.resolved, valued[index]!.own), pkg.id),
    category_id: pkg.category_id,
  }));
  const { coupon_check: couponCheck, amount_after_promos: _afterPromos, ...priced } = priceCart({ cart, promos: state.promos, coupon, now });
  // A quote's coupon passed these checks when it was issued: its prices are honoured as they are.
  const priceRefusal = coupon && couponCheck && !state.quoted ? couponPriceRefusal(coupon, couponCheck) : undefined;
  if (priceRefusal) problems.push(...priceRefusal.details);

  const limits: LimitReservation[] =
    state.held === null
      ? []
      : found.flatMap(({ asked, pkg }) => (pkg.per_customer_limit === null ? [] : [{ package_id: pkg.id, units: asked.quantity, limit: pkg.per_customer_limit }]));
  const writes = 3 + request.lines.length + limits.length + (coupon ? COUPON_WRITES : 0) + request.extraWrites;
  if (writes > TRANSACTION_ITEMS_MAX) {
    problems.push({
      message: `This order has too many packages with a per-customer limit to be placed at once; split it`,
      code: 'VALIDATION_FAILED',
      field: request.valuesField === 'fields' ? 'cart' : 'packages',
    });
  }
  if (problems.length > 0) throw new HttpError(422, problems);
  return {
    prices: state.quoted ?? priced,
    variables: orderLevel.resolved,
    lineVariables: new Map(valued.map((line) => [line.package_id, line.own])),
    coupon,
    stock: found.flatMap(({ asked, pkg }) => (pkg.stock === null ? [] : [{ package_id: pkg.id, units: asked.quantity }])),
    limits,
  };
}

/** A storefront cart's values: the order-level ones and each line's own, with the problems of their bounds. */
export interface CartValues {
  values: GivenValue[];
  lines: GivenValue[][];
  problems: ErrorDetail[];
}

/**
 * A storefront cart's variable values: the order's `fields` and each line's own `fields` (section
 * 8: a line's fields belong to that line). Together they are held to the bounds of an order's
 * `variables` (distinct names and bytes), since the order item stores them all and each command
 * renders with them.
 */
export function cartValues(orderFields: Readonly<Record<string, string>>, lines: readonly { fields?: Readonly<Record<string, string>> }[]): CartValues {
  const given = (fields: Readonly<Record<string, string>>, prefix: string): GivenValue[] =>
    Object.entries(fields).map(([name, value]) => ({ name, value, nameField: `${prefix}.${name}`, valueField: `${prefix}.${name}` }));
  const values = given(orderFields, 'fields');
  const perLine = lines.map((line, index) => given(line.fields ?? {}, `cart.${index}.fields`));
  const every = [...values, ...perLine.flat()];
  const problems: ErrorDetail[] = [];
  const names = new Set(every.map(({ name }) => name.toLowerCase())).size;
  if (names > ORDER_VARIABLES_MAX) {
    problems.push({ message: `The fields of a cart may name at most ${ORDER_VARIABLES_MAX} variables; these name ${names}`, code: 'VALIDATION_FAILED', field: 'fields' });
  }
  // Measured as the body carries them (`{name: value}` per record), so that one `fields` the schema accepts is never refused here.
  const bytes = [orderFields, ...lines.map((line) => line.fields ?? {})].reduce((sum, fields) => sum + (Object.keys(fields).length > 0 ? jsonBytes(fields) : 0), 0);
  if (bytes > ORDER_VALUES_BYTES_MAX) {
    problems.push({
      message: `The fields of a cart together must be at most ${ORDER_VALUES_BYTES_MAX} bytes as JSON (UTF-8); these are ${bytes}`,
      code: 'VALIDATION_FAILED',
      field: 'fields',
    });
  }
  return { values, lines: perLine, problems };
}

/** What a quote is issued for: the same packages and quantities in any line order, the same values, coupon and ref_code. */
export function cartSignature(cart: {
  lines: readonly (Pick<AskedLine, 'package_id' | 'quantity'> & { values?: readonly Pick<GivenValue, 'name' | 'value'>[] })[];
  values: readonly Pick<GivenValue, 'name' | 'value'>[];
  coupon: string | null;
  ref_code: string | null;
}): string {
  const sorted = (values: readonly Pick<GivenValue, 'name' | 'value'>[]) =>
    values.map(({ name, value }) => [name.toLowerCase(), value]).sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
  const lines = [...cart.lines].map(({ package_id, quantity, values }) => [package_id, quantity, sorted(values ?? [])] as const).sort((a, b) => a[0] - b[0]);
  return JSON.stringify({ lines, values: sorted(cart.values), coupon: cart.coupon?.toLowerCase() ?? null, ref_code: cart.ref_code?.toLowerCase() ?? null });
}

export interface StoredQuote {
  signature: string;
  expires_at: string;
  prices: CartPrices;
}

/** The quote's prices when it is unexpired at `now` and was issued for this very cart; otherwise the order is priced now. */
export function honouredPrices(quote: StoredQuote | undefined, signature: string, now: number): CartPrices | null {
  if (!quote || Date.parse(quote.expires_at) <= now || quote.signature !== signature) return null;
  return quote.prices;
}

/**
 * The e-mail an order is placed under. A logged-in buyer's order is the buyer's: client_email may
 * be left out and, if sent, must be the buyer's (ignoring case). A guest must send it.
 */
export function orderEmail(given: string | null, buyer: { email: string } | undefined | 'guest'): string {
  if (buyer === 'guest') {
    if (given === null) throw unprocessable('client_email is required', 'client_email');
    return given;
  }
  // A valid token whose customer is gone names nobody.
  if (!buyer) throw customerUnauthenticated();
  if (given !== null && given.toLowerCase() !== buyer.email.toLowerCase()) {
    throw unprocessable("client_email must be the logged-in buyer's e-mail (or be left out)", 'client_email');
  }
  return given ?? buyer.email;
}
