import type { AssessedCart } from '#lib/domain/cart.ts';
import { planBatch } from '#lib/domain/delivery.ts';
import { conflict, unprocessable } from '#lib/errors.ts';
import type { PlannedCommand } from '#lib/schemas/command.ts';
import type { CheckoutExtras, Delivery, OrderCreate, OrderPackageLine, OrderStatus, PlacedOrder } from '#lib/schemas/order.ts';
import type { Package } from '#lib/schemas/package.ts';

/*
 * The rules of an order that need no I/O. lib/flows/order.ts reads what they need, they decide,
 * and the flow writes what they decided:
 *
 * 1. `assessCart` (lib/domain/cart.ts): every rule of the cart, its prices (the pricing engine),
 *    its coupon and what it reserves;
 * 2. `draftOrder`: the order to store, with its commands rendered; it takes the allocated ids
 *    and `now`, which the flow obtains only once 1 passed (a refused order allocates no id).
 *
 * Then the status changes: `approval` (and `approvalPlan`: what it queues), `cancellation`,
 * `reversal` (refund, chargeback), `assertResendable`.
 */

/**
 * An approval writes the order's update, every command, the chain item that orders them and the
 * list counts in one TransactWrite (at most 100 items), so an order delivers at most 97 commands
 * (a template naming several servers counts once per server); this is checked when it is placed.
 * (Orders placed with 98 before the counts existed still approve: lib/db/order.ts.)
 */
export const ORDER_COMMANDS_MAX = 97;
/** The rendered commands live in the order item (400 KB) and in one transaction (4 MB). */
export const ORDER_COMMANDS_BYTES_MAX = 256 * 1024;

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
 * The names of the placeholders in these templates that could be checkout variables (built-ins
 * apart): what an order must know of the store's variables to render its commands, read by name
 * instead of reading every variable of the store.
 */
export const variableNamesInCommands = (templates: readonly string[]): string[] => [
  ...new Set(templates.flatMap((template) => [...template.matchAll(PLACEHOLDER)].map((match) => match[1]!)).filter((name) => !(BUILT_INS as readonly string[]).includes(name))),
];

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
  const deliveries = lines.flatMap((line) => {
    // The line's own values override the order-level ones for this package's commands (section 8).
    const own = line.variables ?? [];
    const lineContext =
      own.length === 0 ? context : { ...context, variables: new Map([...context.variables, ...own.map(({ name, value }) => [name.toLowerCase(), value] as const)]) };
    return (catalog.get(line.package_id)?.commands ?? []).map((template) => ({
      package_id: line.package_id,
      command: renderCommand(template.command, lineContext, line.quantity),
      offline_execute: template.offline_execute,
      delay_seconds: template.delay_seconds,
      servers: template.servers ?? null,
      stage: template.stage ?? 'APPROVED',
    }));
  });
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

/** Who the order is for, as the operator or the buyer gave it. */
export type OrderClient = Pick<OrderCreate, 'client_identifier' | 'client_email' | 'client_name' | 'client_social' | 'ref_code'>;

/** What the flow read and step 1 decided. */
export interface OrderBasis {
  client: OrderClient;
  catalog: ReadonlyMap<number, Package>;
  /** Lower-case names of the store's variables the commands may name: a placeholder naming one the order did not fill renders empty. */
  knownVariables: ReadonlySet<string>;
  assessed: AssessedCart;
  checkout: CheckoutExtras | null;
}

export interface OrderIds {
  storeId: number;
  orderId: number;
  internalId: string;
}

/** Step 2: the PENDING order to store, with the prices step 1 decided and its commands rendered. */
export function draftOrder({ client, catalog, knownVariables, assessed, checkout }: OrderBasis, ids: OrderIds, now: number): PlacedOrder {
  const createdAt = new Date(now).toISOString();
  const { prices, coupon } = assessed;
  const lines: OrderPackageLine[] = prices.items.map((item) => ({
    package_id: item.package_id,
    name: item.name,
    price: item.unit_price,
    quantity: item.quantity,
    options_price: item.options_price,
    subtotal: item.subtotal,
    promo_discount: item.promo_discount,
    promo_id: item.promo_id,
    coupon_discount: item.coupon_discount,
    total: item.total,
    variables: (assessed.lineVariables.get(item.package_id) ?? []).map(({ name, value }) => ({ name, value })),
  }));
  const deliveries = renderDeliveries(lines, catalog, {
    order_id: ids.orderId,
    internal_id: ids.internalId,
    client_identifier: client.client_identifier,
    client_name: client.client_name,
    client_email: client.client_email,
    client_social: client.client_social,
    variables: new Map(assessed.variables.map((variable) => [variable.name.toLowerCase(), variable.value])),
    knownVariables,
  });
  return {
    id: ids.orderId,
    store_id: ids.storeId,
    internal_id: ids.internalId,
    status: 'PENDING',
    subtotal: prices.subtotal,
    promo_discount: prices.promo_discount,
    coupon_discount: prices.coupon_discount,
    discount: prices.discount,
    total: prices.total,
    client_identifier: client.client_identifier,
    client_email: client.client_email,
    client_name: client.client_name,
    client_social: client.client_social,
    packages: lines,
    variables: assessed.variables.map(({ name, value }) => ({ name, value })),
    coupon: coupon?.coupon ?? null,
    ref_code: client.ref_code,
    approved_at: null,
    canceled_at: null,
    created_at: createdAt,
    updated_at: createdAt,
    package_ids: lines.map((line) => line.package_id),
    deliveries,
    discount_id: coupon?.id ?? null,
    expiry_days: lines.flatMap((line) => {
      const days = catalog.get(line.package_id)?.expiry_days;
      return days ? [{ package_id: line.package_id, days }] : [];
    }),
    stock_reserved: assessed.stock,
    limit_reserved: assessed.limits.map(({ package_id, units }) => ({ package_id, units })),
    checkout,
  };
}

/** `apply`: make the change; `already`: the order is in the wanted state, answer it as it is. */
export type Transition = 'apply' | 'already';

const AFTER_APPROVAL: readonly OrderStatus[] = ['REFUNDED', 'CHARGEBACK'];

/** PENDING -> APPROVED once; approving again answers the order; a canceled, refunded or charged-back order is a 409. */
export function approval(status: OrderStatus): Transition {
  if (status === 'CANCELED' || AFTER_APPROVAL.includes(status)) throw conflict(`Order is ${status}; only a PENDING order can be approved`);
  return status === 'APPROVED' ? 'already' : 'apply';
}

/**
 * PENDING -> CANCELED. Canceling a CANCELED order answers it unchanged (a repeated cancel is
 * harmless and releases nothing twice); an order that was approved has delivered, so canceling
 * it is a 409 (a refund or a chargeback takes it back).
 */
export function cancellation(status: OrderStatus): Transition {
  if (status === 'APPROVED' || AFTER_APPROVAL.includes(status)) throw conflict(`Order is ${status}; only a PENDING order can be canceled`);
  return status === 'CANCELED' ? 'already' : 'apply';
}

export type ReversalStatus = 'REFUNDED' | 'CHARGEBACK';

/**
 * APPROVED -> REFUNDED or CHARGEBACK, once: the same call on an order already in that state
 * answers it; any other state (a chargeback of a refunded order included) is a 409.
 */
export function reversal(status: OrderStatus, target: ReversalStatus): Transition {
  if (status === target) return 'already';
  if (status !== 'APPROVED') throw conflict(`Order is ${status}; only an APPROVED order can be ${target === 'REFUNDED' ? 'refunded' : 'charged back'}`);
  return 'apply';
}

export function assertResendable(status: OrderStatus): void {
  if (status !== 'APPROVED') throw conflict(`Order is ${status}; only an APPROVED order has commands to resend`);
}

const DAY_MS = 86_400_000;

/**
 * What an approval at `now` delivers, as one batch: the APPROVED-stage deliveries, then the
 * EXPIRED-stage ones of packages sold with `expiry_days`, due that many days after the approval
 * whatever the quantity (the template's own delay is replaced: the expiry is the moment). The
 * lines gain `expires_at`. One batch, so one chain item: at most 97 commands + chain + order +
 * counts = 100 items, the bound checked when the order was placed.
 */
export function approvalPlan(order: Pick<PlacedOrder, 'deliveries' | 'packages' | 'expiry_days'>, now: number): { plan: PlannedCommand[]; packages: OrderPackageLine[] } {
  const days = new Map((order.expiry_days ?? []).map((entry) => [entry.package_id, entry.days]));
  const expiring = order.deliveries
    .filter((delivery) => delivery.stage === 'EXPIRED' && days.has(delivery.package_id))
    .map((delivery) => ({ ...delivery, delay_seconds: days.get(delivery.package_id)! * 86_400 }));
  const plan = planBatch([...order.deliveries.filter((delivery) => (delivery.stage ?? 'APPROVED') === 'APPROVED'), ...expiring]);
  const packages = order.packages.map((line) => {
    const lineDays = days.get(line.package_id);
    return { ...line, expires_at: lineDays === undefined ? null : new Date(now + lineDays * DAY_MS).toISOString() };
  });
  return { plan, packages };
}
