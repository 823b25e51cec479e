import * as v from 'valibot';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { adminCommands } from '#lib/admin/commands.ts';
import { cartIndexKey } from '#lib/db/cart-index.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { quoteCart } from '#lib/flows/checkout.ts';
import { createOrder } from '#lib/flows/order.ts';
import { getOrderItem } from '#lib/db/order.ts';
import { storefrontPackagePage } from '#lib/flows/storefront.ts';
import { createPromo } from '#lib/flows/promo.ts';
import { createVariable } from '#lib/flows/variable.ts';
import { quoteBody } from '#lib/schemas/checkout.ts';
import { orderCreateBody } from '#lib/schemas/order.ts';
import { promoCreateBody } from '#lib/schemas/promo.ts';
import { variableCreateBody } from '#lib/schemas/variable.ts';
import { createCategory, createPackage } from '../support/builders.ts';
import { newStore } from '../support/client.ts';
import { capacityMeter } from '../support/capacity.ts';

/**
 * What a quote costs with 10 and with 1,000 promos and variables that do not touch its cart: the
 * same calls and the same capacity, because a cart reads the promos and variables its packages
 * (and their categories) name, and the store-wide ones, never the store's whole lists. Measured on
 * DynamoDB Local (calls counted, ConsumedCapacity summed as DynamoDB reports it) and printed.
 */
const meter = capacityMeter(db);

const tier = (min_amount: number, reward_value: number) => ({ min_amount, reward_type: 'PERCENTAGE' as const, reward_value });
const promoInput = (name: string, targets: { type: 'STORE' | 'CATEGORY' | 'PRODUCT'; id?: number }[], tiers = [tier(1, 5), tier(3, 10)]) =>
  v.parse(promoCreateBody, { name, type: 'PROGRESSIVE', condition_mode: 'QUANTITY', starts_at: '2020-01-01T00:00:00.000Z', targets, tiers });
const variableInput = (name: string, appliesTo: number[]) => v.parse(variableCreateBody, { name, type: 'TEXT', description: name, required: true, applies_to: appliesTo });

/** In groups, so that DynamoDB Local is not asked for a thousand transactions at once. */
async function inGroups(count: number, make: (index: number) => Promise<unknown>) {
  for (let start = 0; start < count; start += 20) await Promise.all(Array.from({ length: Math.min(20, count - start) }, (_, offset) => make(start + offset)));
}

/**
 * A store whose cart (a package in a category) has a store-wide promo, a promo on its category, one
 * on its package and a required variable of its package; and `off` promos and `off` variables on
 * another package, which the cart never touches.
 */
async function cartStore(off: number, packageBody: Record<string, unknown> = {}) {
  const store = await newStore();
  const category = await createCategory(store);
  const pkg = await createPackage(store, { category_id: category.id, ...packageBody });
  const other = await createPackage(store, { name: 'Other' });
  await createPromo(store.storeId, promoInput('Store wide', [{ type: 'STORE' }]));
  await createPromo(store.storeId, promoInput('Ranks', [{ type: 'CATEGORY', id: category.id }], [tier(2, 15)]));
  await createPromo(store.storeId, promoInput('VIP', [{ type: 'PRODUCT', id: pkg.id }], [tier(5, 20)]));
  await createVariable(store.storeId, variableInput('server', [pkg.id]));
  await inGroups(off, (index) => createPromo(store.storeId, promoInput(`Off ${index}`, [{ type: 'PRODUCT', id: other.id }])));
  await inGroups(off, (index) => createVariable(store.storeId, variableInput(`off${index}`, [other.id])));
  return { store, pkg };
}

const quoteOf = (packageId: number) => v.parse(quoteBody, { cart: [{ package_id: packageId, quantity: 2 }], fields: { server: 'eu' }, client_identifier: 'Steve' });

async function measureQuote(storeId: number, packageId: number) {
  const { result, usage } = await meter.measure(() => quoteCart(storeId, quoteOf(packageId)));
  const { quote_id: _id, expires_at: _expires, ...quote } = result;
  return { quote, usage };
}

describe('a cart reads the promos and variables that can apply to it', () => {
  it('prices a quote identically, at the same cost, with 10 and with 1,000 promos and variables off the cart', { timeout: 600_000 }, async () => {
    const few = await cartStore(10);
    const many = await cartStore(1_000);
    const small = await measureQuote(few.store.storeId, few.pkg.id);
    const large = await measureQuote(many.store.storeId, many.pkg.id);
    console.log(
      JSON.stringify({
        quote_cost: [
          { off_cart: 10, ...small.usage },
          { off_cart: 1_000, ...large.usage },
        ],
      }),
    );
    // The store-wide promo's 5% (2 units) is beaten by the category's 15% (2 units); the package's tier at 5 is next.
    expect(small.quote).toMatchObject({ subtotal: 20, promo_discount: 3, total: 17 });
    expect(small.quote.next_tiers.map((next) => next.name)).toEqual(['Store wide', 'VIP']);
    expect({ ...large.quote, items: large.quote.items.map((item) => ({ ...item, package_id: 0, promo_id: 0 })) }).toEqual({
      ...small.quote,
      items: small.quote.items.map((item) => ({ ...item, package_id: 0, promo_id: 0 })),
      next_tiers: small.quote.next_tiers.map((next) => ({ ...next, promo_id: expect.any(Number) })),
    });
    // BatchGet (the package, the cart index, the variable name) + BatchGet (its category, its promos, its variables)
    // + BatchGet (the promo only its category names) + Put quote
    expect(small.usage.calls).toBe(4);
    expect(large.usage).toEqual(small.usage);

    // The storefront's package list (page 1, the cart's package on it) reads the variables of its page's packages, not the store's.
    const listOf = async (storeId: number) => {
      const { result: page, usage } = await meter.measure(() => storefrontPackagePage(storeId, undefined, 1, 1));
      return { fields: page.data[0]!.fields.map((field) => field.name), usage };
    };
    const [smallList, largeList] = [await listOf(few.store.storeId), await listOf(many.store.storeId)];
    console.log(
      JSON.stringify({
        storefront_package_list_cost: [
          { off_page: 10, ...smallList.usage },
          { off_page: 1_000, ...largeList.usage },
        ],
      }),
    );
    expect(smallList.fields).toEqual(['server']);
    // storefront Query + one BatchGet (counter, apply-all ids, cart index), then BatchGet of the page's variables
    expect(smallList.usage.calls).toBe(3);
    expect(largeList).toEqual(smallList);
  });

  it("places an order reading the variables its cart and its commands name, not the store's: same cost at 10 and 1,000 off the cart, commands rendered as before", {
    timeout: 600_000,
  }, async () => {
    // The command names the cart's variable, one of the variables off the cart (it renders empty: the
    // store defines it, the order did not fill it) and a name no variable has (left as written).
    const commands = [{ command: 'give {client_identifier} {server} [{off3}] {not_a_variable}' }];
    const setUp = (off: number) => cartStore(off, { commands });
    const few = await setUp(10);
    const many = await setUp(1_000);
    const order = async ({ store, pkg }: Awaited<ReturnType<typeof setUp>>) => {
      const { result: placed, usage } = await meter.measure(() =>
        createOrder(
          store.storeId,
          v.parse(orderCreateBody, {
            client_identifier: 'Steve',
            client_email: 'steve@example.com',
            client_name: 'Steve',
            packages: [{ package_id: pkg.id, quantity: 1 }],
            variables: [{ name: 'server', value: 'eu' }],
          }),
        ),
      );
      const item = await getOrderItem(store.storeId, placed.id);
      return { commands: item.deliveries.map((delivery) => delivery.command), usage };
    };
    const small = await order(few);
    const large = await order(many);
    console.log(
      JSON.stringify({
        order_create_cost: [
          { off_cart: 10, ...small.usage },
          { off_cart: 1_000, ...large.usage },
        ],
      }),
    );
    expect(small.commands).toEqual(['give Steve eu [] {not_a_variable}']);
    expect(large.commands).toEqual(small.commands);
    expect(large.usage).toEqual(small.usage);
  });

  it('a store older than the index is priced from every promo and variable until `cart-index` has run, then the same from the index', { timeout: 120_000 }, async () => {
    const { store, pkg } = await cartStore(30);
    const indexed = await measureQuote(store.storeId, pkg.id);
    // As a store created before the index: no mark (its sets are the ones the writes kept, which `cart-index` recomputes).
    await db.send(new UpdateCommand({ TableName: TABLE, Key: cartIndexKey(store.storeId), UpdateExpression: 'REMOVE indexed_at, store_promo_ids' }));
    const unmarked = await measureQuote(store.storeId, pkg.id);
    expect(unmarked.quote).toEqual(indexed.quote);
    // Both lists are read whole (a Query each) beside the first BatchGet and the Put.
    expect(unmarked.usage.calls).toBe(4);
    const runs = await Promise.all([1, 2].map(() => adminCommands['cart-index']!.run({ store: String(store.storeId) })));
    expect(runs[0]).toMatchObject({ store_id: store.storeId, promos: 33, variables: 31 });
    const reindexed = await measureQuote(store.storeId, pkg.id);
    expect(reindexed).toEqual(indexed);
  });
});
