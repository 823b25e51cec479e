import * as v from 'valibot';
import { createCategory } from '#lib/db/category.ts';
import { createApiKey, createApiToken } from '#lib/db/credential.ts';
import { createDiscount } from '#lib/flows/discount.ts';
import { createPackage } from '#lib/db/package.ts';
import { createStore } from '#lib/db/store.ts';
import { createTag } from '#lib/db/tag.ts';
import { discountCreateBody } from '#lib/schemas/discount.ts';
import { packageCreateBody } from '#lib/schemas/package.ts';

export const DEMO_DOMAIN = 'demo.localhost';

/**
 * The demo store of the local stack: a token, an identify key and a little catalog to list.
 * Inputs go through the same schemas as the API, so the seed gets the same defaults.
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
  return { store_id: store.id, domain: store.domain, api_token, identify_key: key };
}
