import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { dereferenced } from '../support/openapi.ts';
import type { RouteSpec } from '#lib/http/route.ts';
import { routeEntries, routes } from '#lib/routes/index.ts';
import { cartSignature, cartValues } from '#lib/domain/cart.ts';
import { newChain } from '#lib/domain/delivery.ts';
import { approvalPlan, ORDER_COMMANDS_BYTES_MAX, ORDER_COMMANDS_MAX, renderDeliveries } from '#lib/domain/order.ts';
import { resolveOptions, STORED_OPTIONS_MAX } from '#lib/domain/variable.ts';
import { jsonBytes } from '#lib/schemas/common.ts';
import { CLIENT_FIELD_MAX, EMAIL_MAX, ORDER_PACKAGES_MAX, ORDER_VALUES_BYTES_MAX, ORDER_VARIABLES_MAX, type PlacedOrder } from '#lib/schemas/order.ts';
import { COMMANDS_BYTES_MAX, packageCreateBody, type Package } from '#lib/schemas/package.ts';
import { variableCreateBody, type StoredOption } from '#lib/schemas/variable.ts';
import { checkoutBody } from '#lib/schemas/checkout.ts';
import { itemBytes, ITEM_MAX_BYTES, TRANSACTION_MAX_BYTES, valueBytes } from '../support/item-size.ts';
import { FILLINGS, worstBody, type Filling } from '../support/worst-case.ts';

process.env.TABLE_NAME ??= 'unit-test-table';
const { commandPuts } = await import('#lib/db/command.ts');

/*
 * Every body the schemas accept fits the items it produces (400 KB) and the transactions that
 * write them (4 MB), in the worst characters: the largest accepted body (test/support/worst-case.ts,
 * built from the schemas themselves) in 3-byte characters (the most UTF-8 per UTF-16 unit a
 * character limit lets through), in 4-byte characters, and in control characters (1 byte stored,
 * 6 as JSON: what a response, and the answer kept for an Idempotency-Key, carries). Sizes are
 * counted as DynamoDB counts them (test/support/item-size.ts), numbers at their 21-byte maximum.
 */

/**
 * Keys, index keys, entity, ids, timestamps, revision and the image URL an item adds to its body:
 * the longest key is an order's gsi3pk (`STORE#<id>#BUYER#<e-mail of 254>`), about 300 bytes.
 */
const ITEM_OVERHEAD = 4 * 1024;

/**
 * Bodies that are not stored as one item, and what is checked instead: each of these is measured
 * by a test below, or stores nothing.
 */
const NOT_ONE_ITEM: Record<string, string> = {
  'delivery-claim': '`online` filters the commands handed out; nothing of the body is stored',
  'delivery-ack': 'each result is stored in its own command item (a response of 2,000 characters: 6 KB)',
  'customer-identify': 'the handoff is only hashed to find its item',
  'webstore-quote': 'the quote item keeps the cart signature: measured below',
  'webstore-checkout': 'becomes an order: measured below',
  'order-create': 'becomes an order: measured below',
};

/** Bodies where one field's format depends on another: the worst of them set by hand. */
const ADJUST: Record<string, (body: any, char: Filling) => void> = {
  // An e-mail PIX key takes any non-space character: the longest of the key types.
  'affiliate-me-update': (body, char) => {
    body.withdraw_settings.pix_key_type = 'EMAIL';
    body.withdraw_settings.pix_key = `${char.repeat(Math.floor((140 - 12) / char.length))}@example.com`;
  },
};

const jsonRoutes = routeEntries().filter(([, route]) => route.body && route.body !== 'multipart');

describe('the largest accepted body of every route, in the worst characters', () => {
  for (const [name, route] of jsonRoutes) {
    it.each(FILLINGS)(`${name}: %j`, (char) => {
      const { output } = worstBody(route.body as Exclude<typeof route.body, 'multipart' | undefined>, char, ADJUST[name]);
      if (NOT_ONE_ITEM[name]) return;
      // The item: the body as stored, plus its keys; the kept answer (a response repeating the body) as JSON.
      expect(valueBytes(output) + ITEM_OVERHEAD).toBeLessThanOrEqual(ITEM_MAX_BYTES);
      expect(jsonBytes(output) + ITEM_OVERHEAD).toBeLessThanOrEqual(ITEM_MAX_BYTES);
    });
  }

  it('a package of 100 commands of 2,000 "€" (606 KB) is refused, naming commands; 100 of 2,000 ASCII characters fit', () => {
    const commands = (text: string) => Array.from({ length: 100 }, () => ({ command: text }));
    const refused = packageCreateBody['~run']({ value: { name: 'P', price: 1, commands: commands('€'.repeat(2000)) } }, {});
    expect(refused.issues?.map((issue) => [issue.path?.map((step) => step.key).join('.'), issue.message])).toEqual([
      ['commands', expect.stringMatching(/^commands must be at most 262144 bytes as JSON/)],
    ]);
    const ascii = packageCreateBody['~run']({ value: { name: 'P', price: 1, commands: commands('a'.repeat(2000)) } }, {});
    expect(ascii.issues).toBeUndefined();
  });

  it('the byte bounds are in the OpenAPI document (x-maxBytes), and a size refusal (413) on every route that writes', () => {
    const paths = dereferenced(buildOpenApiDocument(routes as Record<string, RouteSpec>)).paths as Record<string, Record<string, any>>;
    const bodyOf = (path: string, method: string) => paths[path]![method].requestBody.content['application/json'].schema.properties;
    expect(bodyOf('/v1/app/package', 'post').commands['x-maxBytes']).toBe(COMMANDS_BYTES_MAX);
    expect(bodyOf('/v1/app/order', 'post').variables['x-maxBytes']).toBe(ORDER_VALUES_BYTES_MAX);
    expect(bodyOf('/v1/webstore/checkout', 'post').fields['x-maxBytes']).toBe(ORDER_VALUES_BYTES_MAX);
    for (const [, route] of routeEntries().filter(([, route]) => route.access === 'write' && route.method !== 'OPTIONS')) {
      expect(paths[route.path]![route.method.toLowerCase()].responses['413'], `${route.method} ${route.path}`).toBeDefined();
    }
  });
});

/** Distinct names: lists whose names must not repeat stay valid. */
const distinct = (char: Filling, length: number, index: number) => {
  const prefix = String(index);
  return prefix + char.repeat(Math.floor((length - prefix.length) / char.length));
};

describe('a variable, with every option it keeps (deactivated ones included)', () => {
  it.each(FILLINGS)('fits its item: %j', (char) => {
    const { output } = worstBody(variableCreateBody, char);
    // Each write submits 100 new option names: the old ones are kept, deactivated, until a bound refuses the write.
    let stored: StoredOption[] = [];
    let next = 1;
    for (let round = 0; round < STORED_OPTIONS_MAX; round++) {
      const submitted = Array.from({ length: 100 }, (_, index) => ({
        name: distinct(char, 100, round * 100 + index),
        value: char.repeat(Math.floor(255 / char.length)),
        price: 1e9,
      }));
      try {
        ({ options: stored, nextOptionId: next } = resolveOptions(stored, submitted, 'SELECT', next));
      } catch (refusal) {
        expect((refusal as { status: number }).status).toBe(422);
        break;
      }
    }
    const item = { ...(output as Record<string, unknown>), options: stored, name_lower: (output as { name: string }).name, next_option_id: next };
    expect(itemBytes(item) + ITEM_OVERHEAD).toBeLessThanOrEqual(ITEM_MAX_BYTES);
  });
});

/** The worst order: every field at its bound, its rendered commands at the bounds renderDeliveries enforces. */
function worstOrder(char: Filling): PlacedOrder {
  const text = (length: number, index = 0) => distinct(char, length, index);
  const { output: checkout } = worstBody(checkoutBody, char);
  // The cart's order-level values at their bound, as the checkout stores them (bounded like an order's `variables`; the lines' own share that bound).
  const given = cartValues((checkout as { fields: Record<string, string> }).fields, []);
  expect(given.problems).toEqual([]);
  const variables = given.values.map(({ name, value }) => ({ name, value }));
  const lines = Array.from({ length: ORDER_PACKAGES_MAX }, (_, index) => ({
    package_id: 1e12 + index,
    name: text(100, index),
    price: 1e9,
    quantity: 1000,
    options_price: 1e9,
    subtotal: 1e9,
    promo_discount: 1e9,
    promo_id: 1e12,
    coupon_discount: 1e9,
    total: 1e9,
    variables: [],
  }));
  // 98 commands sharing the 256 KB: as many bytes as the order may render.
  const perCommand = Math.floor(ORDER_COMMANDS_BYTES_MAX / ORDER_COMMANDS_MAX / Buffer.byteLength(char)) * char.length;
  const templates = Array.from({ length: ORDER_COMMANDS_MAX }, (_, index) => ({
    command: text(perCommand, index).slice(0, perCommand),
    servers: [1e12],
    stage: 'APPROVED' as const,
    offline_execute: true,
    delay_seconds: 31_536_000,
  }));
  const catalog = new Map<number, Package>([[lines[0]!.package_id, { commands: templates } as unknown as Package]]);
  const context = {
    order_id: 1e12,
    internal_id: 'i'.repeat(22),
    client_identifier: text(CLIENT_FIELD_MAX),
    client_name: text(CLIENT_FIELD_MAX),
    client_email: 'e'.repeat(EMAIL_MAX),
    client_social: text(CLIENT_FIELD_MAX),
    variables: new Map<string, string>(),
    knownVariables: new Set<string>(),
  };
  const deliveries = renderDeliveries(lines, catalog, context);
  expect(deliveries).toHaveLength(ORDER_COMMANDS_MAX);
  const reserved = lines.map((line) => ({ package_id: line.package_id, units: 1000 }));
  const now = '2026-11-23T00:00:00.000Z';
  return {
    id: 1e12,
    store_id: 1e12,
    internal_id: context.internal_id,
    status: 'PENDING',
    subtotal: 1e9,
    promo_discount: 1e9,
    coupon_discount: 1e9,
    discount: 1e9,
    total: 1e9,
    client_identifier: context.client_identifier,
    client_email: context.client_email,
    client_name: context.client_name,
    client_social: context.client_social,
    packages: lines,
    variables,
    coupon: 'C'.repeat(50),
    ref_code: 'R'.repeat(32),
    approved_at: null,
    canceled_at: null,
    refunded_at: now,
    chargeback_at: now,
    created_at: now,
    updated_at: now,
    package_ids: lines.map((line) => line.package_id),
    deliveries,
    discount_id: 1e12,
    stock_reserved: reserved,
    limit_reserved: reserved,
    expiry_days: lines.map((line) => ({ package_id: line.package_id, days: 3650 })),
    checkout: { client_document: text(32), client_phone: text(32), gateway: text(50), terms: true, customer_id: 1e12 },
  };
}

describe('an order, its approval and its quote', () => {
  it.each(FILLINGS)('the order item fits 400 KB: %j', (char) => {
    const order = worstOrder(char);
    expect(order.variables.length).toBeLessThanOrEqual(ORDER_VARIABLES_MAX);
    const item = {
      ...order,
      coupon_counters: ['x'.repeat(400), 'y'.repeat(400)],
      command_ids: Array.from({ length: ORDER_COMMANDS_MAX }, (_, index) => 1e12 + index),
      commission_pending: true,
    };
    expect(itemBytes(item) + ITEM_OVERHEAD).toBeLessThanOrEqual(ITEM_MAX_BYTES);
  });

  it.each(FILLINGS)('the approval (order update, 98 commands carrying the order, their chain) fits one transaction of 4 MB, each command 400 KB: %j', (char) => {
    const order = worstOrder(char);
    const { plan, packages } = approvalPlan(order, Date.parse('2026-11-23T00:00:00Z'));
    const ids = plan.map((_, index) => 1e12 + index);
    const context = {
      client_identifier: order.client_identifier,
      client_email: order.client_email,
      client_name: order.client_name,
      client_social: order.client_social,
      internal_id: order.internal_id,
      variables: order.variables,
    };
    const puts = commandPuts(order.store_id, order.id, context, plan, newChain(ids, plan) ?? [], ids[0]!, order.created_at);
    const items = puts.map((write) => (write.item.Put?.Item ?? {}) as Record<string, unknown>);
    for (const item of items) expect(itemBytes(item)).toBeLessThanOrEqual(ITEM_MAX_BYTES);
    const orderUpdate = valueBytes(packages) + valueBytes(ids) + 1024;
    expect(items.reduce((sum, item) => sum + itemBytes(item), orderUpdate)).toBeLessThanOrEqual(TRANSACTION_MAX_BYTES);
  });

  it.each(FILLINGS)('the quote item (the cart signature and its prices) fits 400 KB: %j', (char) => {
    const order = worstOrder(char);
    const lines = order.packages.map((line) => ({ package_id: line.package_id, quantity: line.quantity, field: 'cart.0' }));
    const signature = cartSignature({ lines, values: order.variables, coupon: order.coupon, ref_code: order.ref_code });
    const prices = { items: order.packages, subtotal: 1e9, promo_discount: 1e9, coupon_discount: 1e9, discount: 1e9, total: 1e9, coupon: order.coupon, next_tiers: [] };
    expect(itemBytes({ signature, prices }) + ITEM_OVERHEAD).toBeLessThanOrEqual(ITEM_MAX_BYTES);
  });

  it('the fields of a whole cart are held to the bounds of an order: count and bytes, named on fields', () => {
    const many = Array.from({ length: ORDER_PACKAGES_MAX }, (_, line) => ({ fields: Object.fromEntries(Array.from({ length: 2 }, (_, index) => [`v${line}_${index}`, 'x'])) }));
    expect(cartValues({}, many).problems).toEqual([expect.objectContaining({ field: 'fields', message: expect.stringMatching(/at most 50 variables/) })]);
    const heavy = Array.from({ length: 30 }, (_, line) => ({ fields: { [`v${line}`]: '€'.repeat(255) } }));
    expect(cartValues({}, heavy).problems).toEqual([expect.objectContaining({ field: 'fields', message: expect.stringMatching(/at most 16384 bytes as JSON/) })]);
    const ascii = Array.from({ length: 50 }, (_, line) => ({ fields: { [`v${'0'.repeat(47)}${String(line).padStart(2, '0')}`]: 'a'.repeat(255) } }));
    expect(cartValues({}, ascii).problems).toEqual([]);
  });
});
