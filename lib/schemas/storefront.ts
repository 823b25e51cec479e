import * as v from 'valibot';
import { pageQueryEntries, queryInt } from '#lib/schemas/common.ts';
import { COUPON_MAX, DISCOUNT_TYPES } from '#lib/schemas/discount.ts';
import { storeTheme } from '#lib/schemas/store.ts';
import { VARIABLE_TYPES, variableOption } from '#lib/schemas/variable.ts';

/**
 * The public storefront (extensions section 8), shaped as the official in-game store client
 * reads it: its paths, query names and field names.
 */
export const STOREFRONT_LIMIT_MAX = 1000;

export const storefrontStoreResponse = v.object({
  store: v.object({
    id: v.number(),
    name: v.string(),
    domain: v.string(),
    /** The domain pages should use: the store's domain. */
    active_domain: v.string(),
    /** ISO 4217: the currency of every price shown. */
    currency: v.string(),
    theme: storeTheme,
    /** The store's terms of sale, or null; when set, the quote and the checkout need `terms: true`. */
    terms_url: v.nullable(v.string()),
  }),
});

export const storefrontCategoryQuery = v.object({
  ...pageQueryEntries({ maxLimit: STOREFRONT_LIMIT_MAX }),
  /** Sent by the client; categories have no sub-categories, so every value answers the same list. */
  include_sub_categories: v.optional(v.string()),
});

export const storefrontCategory = v.object({
  id: v.number(),
  name: v.string(),
  parent_id: v.null(),
  /** Enabled packages in the category, variations included. */
  packages_count: v.number(),
  sub_categories: v.pipe(v.array(v.unknown()), v.maxLength(0)),
});

export const storefrontPackageQuery = v.object({
  ...pageQueryEntries({ maxLimit: STOREFRONT_LIMIT_MAX }),
  category_id: v.optional(queryInt('category_id')),
});

export const storefrontField = v.object({
  id: v.number(),
  name: v.string(),
  description: v.string(),
  type: v.picklist(VARIABLE_TYPES),
  required: v.boolean(),
  regex: v.nullable(v.string()),
  /** The active options of a SELECT variable; empty for the other types. */
  options: v.array(variableOption),
});

export const storefrontPackage = v.object({
  id: v.number(),
  name: v.string(),
  description: v.string(),
  price: v.number(),
  enabled: v.boolean(),
  category_id: v.nullable(v.number()),
  parent_id: v.nullable(v.number()),
  image: v.nullable(v.string()),
  tags: v.array(v.object({ id: v.number(), name: v.string(), color: v.string() })),
  stock: v.object({
    /** Units left; null when unlimited. */
    quantity: v.nullable(v.number()),
    /** False when sold out. */
    available: v.boolean(),
  }),
  /** The checkout variables that apply to the package. */
  fields: v.array(storefrontField),
});

/** Any text: a code that could not be a coupon gets the same 404 as an unknown one (lib/flows/storefront.ts). */
export const couponParams = v.object({ code: v.string() });
export const COUPON_SHAPE = new RegExp(`^[A-Za-z0-9_-]{1,${COUPON_MAX}}$`);

export const storefrontCoupon = v.object({
  coupon: v.string(),
  type: v.picklist(DISCOUNT_TYPES),
  value: v.number(),
  applies_to: v.array(v.number()),
  min_price: v.nullable(v.number()),
  expires_in: v.nullable(v.string()),
});

export type StorefrontPackage = v.InferOutput<typeof storefrontPackage>;
export type StorefrontCategory = v.InferOutput<typeof storefrontCategory>;
