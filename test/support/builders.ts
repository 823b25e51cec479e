import { expect } from 'vitest';
import type { newStore } from './client.ts';

/**
 * One builder per entity, for integration tests: each creates the entity through the API (the
 * operator's own route), asserts the create succeeded, and answers the created resource.
 * Defaults are the smallest valid body; `body` overrides any field.
 */
export type Store = Awaited<ReturnType<typeof newStore>>;
type Body = Record<string, unknown>;

export const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A moment safely in the past, for `starts_at` and similar. */
export const PAST = '2020-01-01T00:00:00.000Z';
export const CLIENT = { client_identifier: 'Steve', client_email: 'steve@example.com', client_name: 'Steve Smith' };

async function created<T>(store: Store, path: string, body: Body): Promise<T> {
  const res = await store.post(path, body);
  expect(res.status, `POST ${path}: ${res.text}`).toBe(200);
  return res.body as T;
}

export interface CreatedPackage {
  id: number;
  name: string;
  price: number;
  image: string | null;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

export const createPackage = (store: Store, body: Body = {}) => created<CreatedPackage>(store, '/v1/app/package', { name: 'VIP', price: 10, ...body });
export const createCategory = (store: Store, body: Body = {}) => created<{ id: number; name: string }>(store, '/v1/app/category', { name: 'Ranks', ...body });
export const createTag = (store: Store, body: Body = {}) => created<{ id: number; name: string; color: string }>(store, '/v1/app/tag', { name: 'Sale', color: '#ef4444', ...body });
export const createVariable = (store: Store, body: Body = {}) =>
  created<{ id: number; name: string; options?: { id: number; name: string; value: string; price: number | null }[]; [field: string]: unknown }>(store, '/v1/app/variable', {
    name: 'nick',
    type: 'TEXT',
    description: 'Asked at checkout',
    ...body,
  });
export const createDiscount = (store: Store, body: Body = {}) =>
  created<{ id: number; coupon: string; uses: number; [field: string]: unknown }>(store, '/v1/app/discount', { coupon: 'SAVE5', type: 'VALUE', value: 5, ...body });
export const createPromo = (store: Store, body: Body = {}) =>
  created<{ id: number; [field: string]: unknown }>(store, '/v1/app/promo', {
    name: 'Promo',
    type: 'PROGRESSIVE',
    condition_mode: 'QUANTITY',
    starts_at: PAST,
    targets: [{ type: 'STORE' }],
    tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 }],
    ...body,
  });

/** An order body for one unit of each package, by the default client. */
export const orderBody = (packageIds: number | number[], extra: Body = {}) => ({
  ...CLIENT,
  packages: [packageIds].flat().map((package_id) => ({ package_id, quantity: 1 })),
  ...extra,
});

export interface CreatedOrder {
  id: number;
  internal_id: string;
  status: string;
  [field: string]: unknown;
}

export const placeOrder = (store: Store, body: Body) => created<CreatedOrder>(store, '/v1/app/order', body);

/** A package and a PENDING order of one unit of it. */
export async function createOrder(store: Store, extra: Body = {}, packageBody: Body = {}) {
  const pkg = await createPackage(store, { price: 5, ...packageBody });
  return placeOrder(store, orderBody(pkg.id, extra));
}
