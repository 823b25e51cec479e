import { assertCouponUsable, discountAmount, type CouponRecord } from '#lib/domain/coupon.ts';
import { roundCents, subtotalOf } from '#lib/domain/money.ts';
import { resolveVariables, type ResolvedVariable } from '#lib/domain/variable.ts';
import { conflict, HttpError, unprocessable, type ErrorDetail } from '#lib/errors.ts';
import type { LIMIT_CRITERIA } from '#lib/schemas/discount.ts';
import type { Delivery, OrderCreate, OrderPackageLine, OrderStatus, PlacedOrder } from '#lib/schemas/order.ts';
import type { Package } from '#lib/schemas/package.ts';
import type { Variable } from '#lib/schemas/variable.ts';

/**
 * The rules of an order that need no I/O. lib/flows/order.ts reads what they need, they decide,
 * and the flow writes what they decided:
 *
 * 1. `orderContents`: the lines (priced from the catalog) and the checked variables;
 * 2. `decideCoupon`: whether the coupon may be used, from its record and this client's counts;
 * 3. `draftOrder`: the order to store, priced (one call: `priceOrder`), with its commands
 *    rendered; it takes the allocated ids and `now`, which the flow obtains only once 1 and 2
 *    passed (a refused order allocates no id).
 *
 * Then the status changes: `approval`, `cancellation`, `assertResendable`.
 */

/**
 * An approval writes the order's update, every command and the chain item that orders them in one
 * TransactWrite (at most 100 items), so an order delivers at most 98 commands (a template naming
 * several servers counts once per server); this is checked when it is placed.
 */
export const ORDER_COMMANDS_MAX = 98;
/** The rendered commands live in the order item (400 KB) and in one transaction (4 MB). */
export const ORDER_COMMANDS_BYTES_MAX = 256 * 1024;

/** The order's lines, priced from the catalog as it is now; every unknown package reported at once. */
export function orderLines(input: OrderCreate['packages'], catalog: ReadonlyMap<number, Package>): OrderPackageLine[] {
  const missing: ErrorDetail[] = [];
  const lines = input.flatMap((line, index) => {
    const pkg = catalog.get(line.package_id);
    if (!pkg) {
      missing.push({ message: `Package ${line.package_id} does not exist in this store`, code: 'VALIDATION_FAILED', field: `packages.${index}.package_id` });
      return [];
    }
    return [{ package_id: pkg.id, name: pkg.name, price: pkg.price, quantity: line.quantity }];
  });
  if (missing.length > 0) throw new HttpError(422, missing);
  return lines;
}

export interface OrderContents {
  lines: OrderPackageLine[];
  variables: ResolvedVariable[];
}

/** Step 1: the lines and the variables' values, or the 422 of what is wrong with them. */
export function orderContents(input: OrderCreate, catalog: ReadonlyMap<number, Package>, defined: readonly Variable[]): OrderContents {
  const lines = orderLines(input.packages, catalog);
  return { lines, variables: resolveVariables(defined, input.variables, lines.map((line) => line.package_id)) };
}

/** The coupon as read for an order: its record and this client's uses under each criteria. */
export interface CouponState {
  record: CouponRecord;
  clientUses: Record<(typeof LIMIT_CRITERIA)[number], number>;
}

/** Step 2: the coupon to reserve, or the 422 of the first rule it breaks for this order. */
export function decideCoupon(state: CouponState, lines: readonly OrderPackageLine[], client: Pick<OrderCreate, 'client_email' | 'client_identifier'>, now: number): CouponRecord {
  const { record } = state;
  assertCouponUsable(record, lines, { client_email: client.client_email, client_identifier: client.client_identifier, clientUses: state.clientUses[record.limit_criteria], now });
  return record;
}

export interface OrderPrices {
  subtotal: number;
  discount: number;
  total: number;
}

/** What the order costs. The single pricing call of a draft: promos and option prices will join here. */
export function priceOrder(lines: readonly OrderPackageLine[], coupon: CouponRecord | null): OrderPrices {
  const subtotal = subtotalOf(lines);
  const discount = coupon ? discountAmount(coupon, lines) : 0;
  return { subtotal, discount, total: roundCents(subtotal - discount) };
}

export interface RenderContext {
  order_id: number;
  internal_id: string;
  client_identifier: string;
  client_name: string;
  client_email: string;
  client_social: string | null;
  /** The order's values, by lower-case name; a variable of the store the order did not fill renders empty. */
  variables: ReadonlyMap<string, string>;
  knownVariables: ReadonlySet<string>;
}

const PLACEHOLDER = /\{([A-Za-z0-9_-]{1,50})\}/g;
const BUILT_INS = ['client_identifier', 'client_name', 'client_email', 'client_social', 'order_id', 'internal_id', 'quantity'] as const;

/**
 * Replaces `{name}` placeholders in one pass (a value containing `{x}` is never expanded
 * again). Built-ins (lower case, exact) win over a checkout variable of the same name; checkout
 * variables match ignoring case; any other `{...}` is left as written.
 */
export function renderCommand(template: string, context: RenderContext, quantity: number): string {
  const builtIns: Record<(typeof BUILT_INS)[number], string> = {
    client_identifier: context.client_identifier,
    client_name: context.client_name,
    client_email: context.client_email,
    client_social: context.client_social ?? '',
    order_id: String(context.order_id),
    internal_id: context.internal_id,
    quantity: String(quantity),
  };
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    if ((BUILT_INS as readonly string[]).includes(name)) return builtIns[name as (typeof BUILT_INS)[number]];
    const lower = name.toLowerCase();
    if (context.variables.has(lower)) return context.variables.get(lower)!;
    return context.knownVariables.has(lower) ? '' : whole;
  });
}

/** Every command template of every line, rendered; bounded so that the approval fits one transaction. */
export function renderDeliveries(lines: readonly OrderPackageLine[], catalog: ReadonlyMap<number, Package>, context: RenderContext): Delivery[] {
  const deliveries = lines.flatMap((line) =>
    (catalog.get(line.package_id)?.commands ?? []).map((template) => ({
      package_id: line.package_id,
      command: renderCommand(template.command, context, line.quantity),
      offline_execute: template.offline_execute,
      delay_seconds: template.delay_seconds,
      servers: template.servers ?? null,
      stage: template.stage ?? 'APPROVED',
    })),
  );
  const commands = deliveries.reduce((sum, delivery) => sum + (delivery.servers?.length ?? 1), 0);
  if (commands > ORDER_COMMANDS_MAX) {
    throw unprocessable(`The packages of an order may deliver at most ${ORDER_COMMANDS_MAX} commands; these deliver ${commands}`, 'packages');
  }
  const bytes = deliveries.reduce((sum, delivery) => sum + Buffer.byteLength(delivery.command, 'utf8'), 0);
  if (bytes > ORDER_COMMANDS_BYTES_MAX) {
    throw unprocessable(`The commands of this order would exceed ${ORDER_COMMANDS_BYTES_MAX / 1024} KB once rendered`, 'packages');
  }
  return deliveries;
}

/** What the flow read and steps 1 and 2 decided. */
export interface OrderBasis {
  input: OrderCreate;
  catalog: ReadonlyMap<number, Package>;
  /** Every variable of the store: a placeholder naming one the order did not fill renders empty. */
  defined: readonly Variable[];
  contents: OrderContents;
  coupon: CouponRecord | null;
}

export interface OrderIds {
  storeId: number;
  orderId: number;
  internalId: string;
}

/** Step 3: the PENDING order to store, priced and with its commands rendered. */
export function draftOrder({ input, catalog, defined, contents, coupon }: OrderBasis, ids: OrderIds, now: number): PlacedOrder {
  const createdAt = new Date(now).toISOString();
  const deliveries = renderDeliveries(contents.lines, catalog, {
    order_id: ids.orderId,
    internal_id: ids.internalId,
    client_identifier: input.client_identifier,
    client_name: input.client_name,
    client_email: input.client_email,
    client_social: input.client_social,
    variables: new Map(contents.variables.map((variable) => [variable.name.toLowerCase(), variable.value])),
    knownVariables: new Set(defined.map((variable) => variable.name.toLowerCase())),
  });
  return {
    id: ids.orderId,
    store_id: ids.storeId,
    internal_id: ids.internalId,
    status: 'PENDING',
    ...priceOrder(contents.lines, coupon),
    client_identifier: input.client_identifier,
    client_email: input.client_email,
    client_name: input.client_name,
    client_social: input.client_social,
    packages: contents.lines,
    variables: contents.variables.map(({ name, value }) => ({ name, value })),
    coupon: coupon?.coupon ?? null,
    ref_code: input.ref_code,
    approved_at: null,
    canceled_at: null,
    created_at: createdAt,
    updated_at: createdAt,
    package_ids: contents.lines.map((line) => line.package_id),
    deliveries,
    discount_id: coupon?.id ?? null,
  };
}

/** `apply`: make the change; `already`: the order is in the wanted state, answer it as it is. */
export type Transition = 'apply' | 'already';

/** PENDING -> APPROVED once; approving again answers the order; a canceled order is a 409. */
export function approval(status: OrderStatus): Transition {
  if (status === 'CANCELED') throw conflict('Order is canceled; only a PENDING order can be approved');
  return status === 'APPROVED' ? 'already' : 'apply';
}

/**
 * PENDING -> CANCELED. Canceling a CANCELED order answers it unchanged (a repeated cancel is
 * harmless and releases nothing twice); an APPROVED order has delivered, so canceling it is a 409.
 */
export function cancellation(status: OrderStatus): Transition {
  if (status === 'APPROVED') throw conflict('Order is approved; only a PENDING order can be canceled');
  return status === 'CANCELED' ? 'already' : 'apply';
}

export function assertResendable(status: OrderStatus): void {
  if (status !== 'APPROVED') throw conflict(`Order is ${status}; only an APPROVED order has commands to resend`);
}
