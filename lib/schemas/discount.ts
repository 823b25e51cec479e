import * as v from 'valibot';
import { pageQueryEntries, patchBody, storableAmount, timestamp, timestampInput } from '#lib/schemas/common.ts';

/**
 * Coupon codes are ASCII letters, digits, `-` and `_`: buyers type them, and ASCII keeps the
 * case-insensitive comparison (lower-casing) free of locale surprises.
 */
export const COUPON_MAX = 50;
const couponCode = v.pipe(
  v.string('coupon must be a string'),
  v.trim(),
  v.minLength(1, 'coupon is required'),
  v.maxLength(COUPON_MAX, `coupon must be at most ${COUPON_MAX} characters`),
  v.regex(/^[A-Za-z0-9_-]+$/, 'coupon may contain only letters, digits, - and _'),
);

export const DISCOUNT_TYPES = ['PERCENTAGE', 'VALUE'] as const;
export const LIMIT_CRITERIA = ['CLIENT_IDENTIFIER', 'CLIENT_EMAIL'] as const;
/** How a `restricted_to` entry is compared with the buyer: their e-mail or their client identifier. */
export const RESTRICTION_CRITERIA = ['CLIENT_EMAIL', 'CLIENT_IDENTIFIER'] as const;
export const DISCOUNT_STATUSES = ['ACTIVE', 'SOLD_OUT', 'EXPIRED'] as const;

/** `[-1]` means every package. */
export const EVERY_PACKAGE = -1;
/** Each listed package is checked inside the write's transaction, which holds at most 100 items. */
export const DISCOUNT_PACKAGES_MAX = 50;
export const RESTRICTED_TO_MAX = 100;
const RESTRICTED_VALUE_MAX = 254;

const appliesTo = v.pipe(
  v.array(v.number('applies_to entries must be package ids'), 'applies_to must be an array of package ids, or [-1] for every package'),
  v.minLength(1, 'applies_to must name at least one package, or be [-1] for every package'),
  v.maxLength(DISCOUNT_PACKAGES_MAX, `applies_to may name at most ${DISCOUNT_PACKAGES_MAX} packages`),
  v.check(
    (ids) => (ids.length === 1 && ids[0] === EVERY_PACKAGE) || ids.every((id) => Number.isSafeInteger(id) && id >= 1),
    'applies_to must be [-1] (every package) or a list of package ids (positive integers)',
  ),
  v.check((ids) => new Set(ids).size === ids.length, 'applies_to must not repeat a package id'),
);

const positiveCount = (name: string) =>
  v.nullable(v.pipe(v.number(`${name} must be a number or null`), v.safeInteger(`${name} must be an integer`), v.minValue(1, `${name} must be at least 1`)));

const discountValue = storableAmount('value', v.pipe(v.number('value must be a number'), v.gtValue(0, 'value must be greater than 0')));

const minPrice = v.nullable(storableAmount('min_price', v.pipe(v.number('min_price must be a number or null'), v.minValue(0, 'min_price must be at least 0'))));

const restrictedTo = v.nullable(
  v.pipe(
    v.array(
      v.pipe(
        v.string('restricted_to entries must be strings'),
        v.trim(),
        v.minLength(1, 'restricted_to entries must not be empty'),
        v.maxLength(RESTRICTED_VALUE_MAX, `restricted_to entries must be at most ${RESTRICTED_VALUE_MAX} characters`),
      ),
      'restricted_to must be an array of strings or null',
    ),
    v.minLength(1, 'restricted_to must hold at least one value; send null for no restriction'),
    v.maxLength(RESTRICTED_TO_MAX, `restricted_to may hold at most ${RESTRICTED_TO_MAX} values`),
  ),
);

const fields = {
  coupon: couponCode,
  type: v.picklist(DISCOUNT_TYPES, 'type must be PERCENTAGE or VALUE'),
  value: discountValue,
  applies_to: appliesTo,
  max_uses: positiveCount('max_uses'),
  max_uses_per_client: positiveCount('max_uses_per_client'),
  expires_in: v.nullable(timestampInput),
  min_price: minPrice,
  limit_criteria: v.picklist(LIMIT_CRITERIA, 'limit_criteria must be CLIENT_IDENTIFIER or CLIENT_EMAIL'),
  restricted_to_criteria: v.nullable(v.picklist(RESTRICTION_CRITERIA, 'restricted_to_criteria must be CLIENT_EMAIL, CLIENT_IDENTIFIER or null')),
  restricted_to: restrictedTo,
};

/**
 * Rules that involve several fields (percentage range, restriction list and its criteria) are
 * checked on the whole discount in lib/db/discount.ts, so that a PATCH is held to them too.
 */
export const discountCreateBody = v.strictObject({
  coupon: fields.coupon,
  type: fields.type,
  value: fields.value,
  applies_to: v.optional(fields.applies_to),
  max_uses: v.optional(fields.max_uses),
  max_uses_per_client: v.optional(fields.max_uses_per_client),
  expires_in: v.optional(fields.expires_in),
  min_price: v.optional(fields.min_price),
  limit_criteria: v.optional(fields.limit_criteria),
  restricted_to_criteria: v.optional(fields.restricted_to_criteria),
  restricted_to: v.optional(fields.restricted_to),
});

const discountPatchFields = v.partial(discountCreateBody);

export const discountPatchBody = patchBody(discountPatchFields);

export const discountListQuery = v.object({
  ...pageQueryEntries(),
  status: v.optional(v.picklist(DISCOUNT_STATUSES, 'status must be ACTIVE, SOLD_OUT or EXPIRED')),
  /** Case-insensitive prefix of the code; empty means no filter. */
  coupon: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(COUPON_MAX, `coupon must be at most ${COUPON_MAX} characters`))),
  restricted_to: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(RESTRICTED_VALUE_MAX, `restricted_to must be at most ${RESTRICTED_VALUE_MAX} characters`))),
});

export const discountResource = v.object({
  id: v.number(),
  store_id: v.number(),
  coupon: v.string(),
  type: v.picklist(DISCOUNT_TYPES),
  value: v.number(),
  applies_to: v.array(v.number()),
  uses: v.number(),
  max_uses: v.nullable(v.number()),
  max_uses_per_client: v.nullable(v.number()),
  expires_in: v.nullable(timestamp),
  min_price: v.nullable(v.number()),
  limit_criteria: v.picklist(LIMIT_CRITERIA),
  restricted_to_criteria: v.nullable(v.picklist(RESTRICTION_CRITERIA)),
  restricted_to: v.nullable(v.array(v.string())),
  created_at: timestamp,
  updated_at: timestamp,
  /** Computed at read time: `EXPIRED` when `expires_in` has passed, else `SOLD_OUT` when `uses >= max_uses`. */
  status: v.picklist(DISCOUNT_STATUSES),
});

export type DiscountCreate = v.InferOutput<typeof discountCreateBody>;
/** From the object schema: the at-least-one-field check would widen the type to a plain record. */
export type DiscountPatch = v.InferOutput<typeof discountPatchBody>;
export type DiscountListQuery = v.InferOutput<typeof discountListQuery>;
export type Discount = v.InferOutput<typeof discountResource>;
export type DiscountStatus = (typeof DISCOUNT_STATUSES)[number];
