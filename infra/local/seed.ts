import * as v from 'valibot';
import { createCategory } from '#lib/db/category.ts';
import { createApiKey, createApiToken } from '#lib/db/credential.ts';
import { createDiscount } from '#lib/flows/discount.ts';
import { uploadPackageImage } from '#lib/flows/image.ts';
import { createPromo } from '#lib/flows/promo.ts';
import { createVariable } from '#lib/flows/variable.ts';
import { approveOrder, createOrder } from '#lib/flows/order.ts';
import { createPackage } from '#lib/db/package.ts';
import { createStore } from '#lib/db/store.ts';
import { createTag } from '#lib/db/tag.ts';
import { discountCreateBody } from '#lib/schemas/discount.ts';
import { orderCreateBody } from '#lib/schemas/order.ts';
import { packageCreateBody } from '#lib/schemas/package.ts';
import { promoCreateBody } from '#lib/schemas/promo.ts';
import { variableCreateBody } from '#lib/schemas/variable.ts';

export const DEMO_DOMAIN = 'demo.localhost';
/** The demo store's buyer: `npm run invoke` issues its token or session for the buyer events. */
export const DEMO_BUYER_EMAIL = 'buyer@demo.localhost';

/** A flat badge, so the storefront example shows real images without shipping binary files. */
const badge = (color: string, letter: string) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160" viewBox="0 0 160 160"><rect width="160" height="160" rx="24" fill="${color}"/>` +
      `<text x="80" y="104" font-family="sans-serif" font-size="72" font-weight="700" fill="#fff" text-anchor="middle">${letter}</text></svg>`,
  );

/**
 * The demo store of the local stack: a token, an identify key, a catalog with everything the
 * storefront example (examples/storefront) shows (images, tags, stock, a SELECT variable, a tiered
 * promo and a coupon), and two orders of the demo buyer (1 approved, with its delivery commands;
 * 2 pending) that the sample events of events/ act on. Inputs go through the same schemas as the API, so the seed gets the
 * same defaults.
 */
export async function seedDemoStore() {
  const store = await createStore({ name: 'Demo Store', domain: DEMO_DOMAIN });
  const { api_token } = await createApiToken(store.id);
  const { key } = await createApiKey(store.id, ['customers:identify']);
  const fresh = await createTag(store.id, { name: 'New', color: '#22c55e' });
  const bestSeller = await createTag(store.id, { name: 'Best seller', color: '#f59e0b' });
  const ranks = await createCategory(store.id, { name: 'Ranks' });
  const catalog = [
    { name: 'VIP rank', price: 9.99, tags: [fresh.id], stock: null, color: '#6366f1', description: 'Colored name, /kit vip every day.', command: 'lp user {client_identifier} parent add vip' },
    { name: 'MVP rank', price: 19.99, tags: [bestSeller.id], stock: 25, color: '#ec4899', description: 'Everything VIP has, plus /fly in the lobby.', command: 'lp user {client_identifier} parent add mvp' },
  ];
  for (const item of catalog) {
    const created = await createPackage(
      store.id,
      v.parse(packageCreateBody, { name: item.name, price: item.price, category_id: ranks.id, description: item.description, tags: item.tags, stock: item.stock, commands: [{ command: item.command }] }),
    );
    await uploadPackageImage(store.id, created.id, { filename: 'badge.svg', bytes: badge(item.color, item.name[0]!) });
  }
  // Not required, so the README's curl quotes (no fields) stay valid; an option with a price shows options_price.
  await createVariable(
    store.id,
    v.parse(variableCreateBody, {
      name: 'server', type: 'SELECT', description: 'Game server', required: false,
      options: [{ name: 'Survival', value: 'survival', price: 0 }, { name: 'Creative', value: 'creative', price: 1 }],
    }),
  );
  // Two tiers, so a cart of 2 sees the next one in `next_tiers` ("add 1 more for 15% off").
  await createPromo(
    store.id,
    v.parse(promoCreateBody, {
      name: 'Bundle deal', type: 'PROGRESSIVE', condition_mode: 'QUANTITY', starts_at: '2025-01-01T00:00:00Z', targets: [{ type: 'STORE' }],
      tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 }, { min_amount: 3, reward_type: 'PERCENTAGE', reward_value: 15 }],
    }),
  );
  await createDiscount(store.id, v.parse(discountCreateBody, { coupon: 'WELCOME10', type: 'PERCENTAGE', value: 10 }));
  const demoOrder = () =>
    createOrder(store.id, v.parse(orderCreateBody, { client_identifier: 'Steve', client_email: DEMO_BUYER_EMAIL, client_name: 'Steve', packages: [{ package_id: 1, quantity: 1 }] }));
  const approved = await demoOrder();
  await approveOrder(store.id, approved.id);
  await demoOrder();
  return { store_id: store.id, domain: store.domain, api_token, identify_key: key, order_internal_id: approved.internal_id };
}
