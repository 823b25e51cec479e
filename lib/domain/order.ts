import { setFlagsFromString } from 'node:v8';
import { HttpError, unprocessable, type ErrorDetail } from '#lib/errors.ts';
import { EVERY_PACKAGE, type Discount } from '#lib/schemas/discount.ts';
import type { OrderCreate, OrderPackageLine, OrderVariable } from '#lib/schemas/order.ts';
import type { Package } from '#lib/schemas/package.ts';
import type { Variable } from '#lib/schemas/variable.ts';

/**
 * The rules of an order that need no I/O: pricing, coupon checks, checkout variables and the
 * rendering of command templates. lib/db/order.ts reads what they need and writes what they decide.
 *
 * Amounts are rounded to cents at each step the buyer sees (subtotal, discount, total).
 */
export const roundCents = (value: number) => Math.round((value + Number.EPSILON) * 100) / 100;

/**
 * An approval writes the order's update and every command in one TransactWrite (at most 100
 * items), so an order delivers at most 99 commands; this is checked when it is placed.
 */
export const ORDER_COMMANDS_MAX = 99;
/** The rendered commands live in the order item (400 KB) and in one transaction (4 MB). */
export const ORDER_COMMANDS_BYTES_MAX = 256 * 1024;

/** A command of the order, rendered when the order is placed (all it depends on is known then). */
export interface Delivery {
  package_id: number;
  command: string;
  offline_execute: boolean;
  delay_seconds: number;
}

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

export const subtotalOf = (lines: readonly OrderPackageLine[]) => roundCents(lines.reduce((sum, line) => sum + line.price * line.quantity, 0));

/** The coupon as stored (the discount item), with the revision orders condition on. */
export type CouponRecord = Omit<Discount, 'status'> & { revision: number };

export interface CouponUse {
  client_identifier: string;
  client_email: string;
  /** Uses of this coupon by this client so far, under the coupon's `limit_criteria`. */
  clientUses: number;
  now: number;
}

const couponError = (message: string, code: string) => unprocessable(message, 'coupon', code);

/** The part of the subtotal the coupon applies to (`[-1]`: every package). */
export function coveredSubtotal(coupon: Pick<CouponRecord, 'applies_to'>, lines: readonly OrderPackageLine[]): number {
  const every = coupon.applies_to.includes(EVERY_PACKAGE);
  return subtotalOf(lines.filter((line) => every || coupon.applies_to.includes(line.package_id)));
}

/** PERCENTAGE: covered subtotal * value / 100; VALUE: value, at most the covered subtotal. */
export function discountAmount(coupon: Pick<CouponRecord, 'type' | 'value' | 'applies_to'>, lines: readonly OrderPackageLine[]): number {
  const covered = coveredSubtotal(coupon, lines);
  return roundCents(coupon.type === 'PERCENTAGE' ? (covered * coupon.value) / 100 : Math.min(coupon.value, covered));
}

/**
 * Throws the 422 of the first rule the coupon breaks for this order, in the order a buyer can
 * act on: expired, sold out, not for this buyer, not for these packages, order too small,
 * used too often by this buyer. The transaction re-checks the counts (`uses`, the per-client
 * count) atomically; this check gives the clear message without a write.
 */
export function assertCouponUsable(coupon: CouponRecord, lines: readonly OrderPackageLine[], use: CouponUse): void {
  if (coupon.expires_in !== null && Date.parse(coupon.expires_in) <= use.now) {
    throw couponError(`Coupon ${coupon.coupon} has expired`, 'COUPON_EXPIRED');
  }
  if (coupon.max_uses !== null && coupon.uses >= coupon.max_uses) throw couponSoldOut(coupon.coupon);
  if (coupon.restricted_to !== null) {
    const value = (coupon.restricted_to_criteria === 'CLIENT_EMAIL' ? use.client_email : use.client_identifier).toLowerCase();
    if (!coupon.restricted_to.some((allowed) => allowed.toLowerCase() === value)) {
      const who = coupon.restricted_to_criteria === 'CLIENT_EMAIL' ? 'client_email' : 'client_identifier';
      throw couponError(`Coupon ${coupon.coupon} is not available to this ${who}`, 'COUPON_RESTRICTED');
    }
  }
  if (!coupon.applies_to.includes(EVERY_PACKAGE) && !lines.some((line) => coupon.applies_to.includes(line.package_id))) {
    throw couponError(`Coupon ${coupon.coupon} does not apply to any package of this order`, 'COUPON_NOT_APPLICABLE');
  }
  const subtotal = subtotalOf(lines);
  if (coupon.min_price !== null && subtotal < coupon.min_price) {
    throw couponError(`Coupon ${coupon.coupon} requires a subtotal of at least ${coupon.min_price}`, 'COUPON_MIN_PRICE');
  }
  if (coupon.max_uses_per_client !== null && use.clientUses >= coupon.max_uses_per_client) throw couponClientLimit(coupon);
}

export const couponNotFound = (code: string) => couponError(`Coupon ${code} does not exist in this store`, 'COUPON_NOT_FOUND');
export const couponSoldOut = (code: string) => couponError(`Coupon ${code} has no uses left`, 'COUPON_SOLD_OUT');
export const couponClientLimit = (coupon: Pick<CouponRecord, 'coupon' | 'max_uses_per_client' | 'limit_criteria'>) =>
  couponError(
    `Coupon ${coupon.coupon} may be used at most ${coupon.max_uses_per_client} time(s) per ${coupon.limit_criteria === 'CLIENT_EMAIL' ? 'client_email' : 'client_identifier'}`,
    'COUPON_CLIENT_LIMIT',
  );

/** A variable applies to an order when it names one of its packages (`applies_to` null: every package). */
const appliesToOrder = (variable: Variable, packageIds: readonly number[]) =>
  variable.applies_to === null || variable.applies_to.some((id) => packageIds.includes(id));

const NUMBER = /^-?\d{1,15}(\.\d{1,6})?$/;

// Makes V8's linear-time regexp engine available (the `l` flag); it changes nothing else.
setFlagsFromString('--enable-experimental-regexp-engine');

/**
 * A variable's `regex` must match the whole value. The operator's pattern runs on buyer input,
 * so a pattern such as `(a|aa)+` could backtrack for minutes: it runs on V8's linear-time engine
 * (no backtracking). The few patterns that engine cannot run (backreferences, lookarounds) fall
 * back to the usual engine, with the input bounded to 255 characters by the schema.
 */
function matchesRegex(pattern: string, value: string): boolean {
  const anchored = `^(?:${pattern})$`;
  let regex: RegExp;
  try {
    regex = new RegExp(anchored, 'l');
  } catch {
    regex = new RegExp(anchored);
  }
  return regex.test(value);
}

function valueProblem(variable: Variable, value: string): string | undefined {
  if (variable.type === 'SELECT' && !(variable.options ?? []).some((option) => option.value === value)) {
    return `${variable.name} must be one of: ${(variable.options ?? []).map((option) => option.value).join(', ')}`;
  }
  if (variable.type === 'NUMBER' && !NUMBER.test(value)) return `${variable.name} must be a number`;
  if (variable.regex !== null && !matchesRegex(variable.regex, value)) return `${variable.name} does not match the required format`;
  return undefined;
}

/**
 * The order's checkout variables, under the names the store gave them. Names match ignoring
 * case (they are unique that way); every value is checked by its variable's type, options and
 * regex; a required variable that applies to an ordered package must be given. All problems
 * are reported at once.
 */
export function resolveVariables(defined: readonly Variable[], input: OrderCreate['variables'], packageIds: readonly number[]): OrderVariable[] {
  const byName = new Map(defined.map((variable) => [variable.name.toLowerCase(), variable]));
  const problems: ErrorDetail[] = [];
  const resolved: OrderVariable[] = [];
  input.forEach((given, index) => {
    const variable = byName.get(given.name.toLowerCase());
    if (!variable) {
      problems.push({ message: `Variable ${given.name} does not exist in this store`, code: 'VALIDATION_FAILED', field: `variables.${index}.name` });
      return;
    }
    const problem = valueProblem(variable, given.value);
    if (problem) problems.push({ message: problem, code: 'VALIDATION_FAILED', field: `variables.${index}.value` });
    resolved.push({ name: variable.name, value: given.value });
  });
  const givenNames = new Set(input.map((given) => given.name.toLowerCase()));
  for (const variable of defined) {
    if (variable.required && appliesToOrder(variable, packageIds) && !givenNames.has(variable.name.toLowerCase())) {
      problems.push({ message: `Variable ${variable.name} is required for the packages of this order`, code: 'VALIDATION_FAILED', field: 'variables' });
    }
  }
  if (problems.length > 0) throw new HttpError(422, problems);
  return resolved;
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
    })),
  );
  if (deliveries.length > ORDER_COMMANDS_MAX) {
    throw unprocessable(`The packages of an order may deliver at most ${ORDER_COMMANDS_MAX} commands; these deliver ${deliveries.length}`, 'packages');
  }
  const bytes = deliveries.reduce((sum, delivery) => sum + Buffer.byteLength(delivery.command, 'utf8'), 0);
  if (bytes > ORDER_COMMANDS_BYTES_MAX) {
    throw unprocessable(`The commands of this order would exceed ${ORDER_COMMANDS_BYTES_MAX / 1024} KB once rendered`, 'packages');
  }
  return deliveries;
}
