import * as v from 'valibot';
import { createCategory } from '#lib/db/category.ts';
import { createApiKey, createApiToken } from '#lib/db/credential.ts';
import { createDiscount } from '#lib/flows/discount.ts';
import { approveOrder, createOrder } from '#lib/flows/order.ts';
import { createPackage } from '#lib/db/package.ts';
import { createStore } from '#lib/db/store.ts';
import { createTag } from '#lib/db/tag.ts';
import { discountCreateBody } from '#lib/schemas/discount.ts';
import { orderCreateBody } from '#lib/schemas/order.ts';
import { packageCreateBody } from '#lib/schemas/package.ts';

export const DEMO_DOMAIN = 'demo.localhost';
/** The demo store's buyer: `npm run invoke` issues its token or session for the buyer events. */
export const DEMO_BUYER_EMAIL = 'buyer@demo.localhost';

/**
 * The demo store of the local stack: a token, an identify key, a little catalog to list, and two
 * orders of the demo buyer (1 approved, with its delivery commands; 2 pending) that the sample
 * events of events/ act on. Inputs go through the same schemas as the API, so the seed gets the
 * same defaults.
 */
export async function seedDemoStore() {
  const store = await createStore({ name: 'Demo Store', domain: DEMO_DOMAIN });
  const { api_token } = await createApiToken(store.id);
  const { key } = await createApiKey(store.id, ['customers:identify']);
  await createTag(store.id, { name: 'New', color: '#22c55e' });
  await createTag(store.id, { name: 'Best seller', color: '#f59e0b' });
  const ranks = await createCategory(store.id, { name: 'Ranks' });
  await createPackage(
    store.id,
    v.parse(packageCreateBody, { name: 'VIP rank', price: 9.99, category_id: ranks.id, commands: [{ command: 'lp user {client_identifier} parent add vip' }] }),
  );
  await createPackage(
    store.id,
    v.parse(packageCreateBody, { name: 'MVP rank', price: 19.99, category_id: ranks.id, commands: [{ command: 'lp user {client_identifier} parent add mvp' }] }),
  );
  await createDiscount(store.id, v.parse(discountCreateBody, { coupon: 'WELCOME10', type: 'PERCENTAGE', value: 10 }));
  const demoOrder = () =>
    createOrder(store.id, v.parse(orderCreateBody, { client_identifier: 'Steve', client_email: DEMO_BUYER_EMAIL, client_name: 'Steve', packages: [{ package_id: 1, quantity: 1 }] }));
  const approved = await demoOrder();
  await approveOrder(store.id, approved.id);
  await demoOrder();
  return { store_id: store.id, domain: store.domain, api_token, identify_key: key, order_internal_id: approved.internal_id };
}
