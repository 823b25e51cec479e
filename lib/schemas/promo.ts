import * as v from 'valibot';
import { patchBody, storableAmount, timestamp, timestampInput } from '#lib/schemas/common.ts';

/**
 * Promo input and output. The schemas check each field on its own (types, enums, lengths,
 * counts); the rules that tie fields together (per `type`, `reward_type`, `condition_mode`)
 * live in lib/domain/promo.ts, so that a PATCH can apply them to the merged promo.
 */
export const PROMO_NAME_MAX = 35;
export const PROMO_TARGETS_MAX = 10;
export const PROMO_TIERS_MAX = 10;
export const TIER_TARGETS_MAX = 10;

export const PROMO_TYPES = ['PROGRESSIVE', 'BUY_X_PAY_Y'] as const;
export const CONDITION_MODES = ['QUANTITY', 'VALUE'] as const;
export const REWARD_TYPES = ['PERCENTAGE', 'VALUE', 'FREE'] as const;
export const TARGET_TYPES = ['STORE', 'CATEGORY', 'PRODUCT'] as const;

const oneOf = (name: string, values: readonly string[]) => `${name} must be one of ${values.join(', ')}`;

const targetInput = v.strictObject({
  type: v.picklist(TARGET_TYPES, oneOf('type', TARGET_TYPES)),
  // Presence per type (none for STORE, required otherwise) is a rule of lib/domain/promo.ts.
  id: v.optional(v.nullable(v.pipe(v.number('id must be a number'), v.safeInteger('id must be an integer'), v.minValue(1, 'id must be at least 1')))),
});

const tierInput = v.strictObject({
  min_amount: storableAmount('min_amount', v.pipe(v.number('min_amount must be a number'), v.minValue(0, 'min_amount must be at least 0'))),
  reward_type: v.picklist(REWARD_TYPES, oneOf('reward_type', REWARD_TYPES)),
  reward_value: v.optional(v.nullable(storableAmount('reward_value', v.pipe(v.number('reward_value must be a number'), v.gtValue(0, 'reward_value must be greater than 0'))))),
  reward_quantity: v.optional(
    v.nullable(v.pipe(v.number('reward_quantity must be a number'), v.safeInteger('reward_quantity must be an integer'), v.minValue(1, 'reward_quantity must be at least 1'))),
  ),
  targets: v.optional(v.pipe(v.array(targetInput, 'targets must be an array'), v.maxLength(TIER_TARGETS_MAX, `A tier has at most ${TIER_TARGETS_MAX} targets`))),
});

/**
 * "Up to 35 characters" counts characters (code points, as JSON Schema's maxLength does), not
 * UTF-16 units: a name of 35 emoji is 35 characters.
 */
const promoName = v.pipe(
  v.string('name must be a string'),
  v.trim(),
  v.minLength(1, 'name is required'),
  v.check((name) => [...name].length <= PROMO_NAME_MAX, `name must be at most ${PROMO_NAME_MAX} characters`),
  v.metadata({ maxLength: PROMO_NAME_MAX }),
);

const promoFields = {
  name: promoName,
  type: v.picklist(PROMO_TYPES, oneOf('type', PROMO_TYPES)),
  condition_mode: v.picklist(CONDITION_MODES, oneOf('condition_mode', CONDITION_MODES)),
  enabled: v.boolean('enabled must be a boolean'),
  starts_at: timestampInput,
  ends_at: v.nullable(timestampInput),
  targets: v.pipe(
    v.array(targetInput, 'targets must be an array'),
    v.minLength(1, 'A promo needs at least 1 target'),
    v.maxLength(PROMO_TARGETS_MAX, `A promo has at most ${PROMO_TARGETS_MAX} targets`),
  ),
  tiers: v.pipe(
    v.array(tierInput, 'tiers must be an array'),
    v.minLength(1, 'A promo needs at least 1 tier'),
    v.maxLength(PROMO_TIERS_MAX, `A promo has at most ${PROMO_TIERS_MAX} tiers`),
  ),
};

export const promoCreateBody = v.strictObject({
  ...promoFields,
  enabled: v.optional(promoFields.enabled, true),
  ends_at: v.optional(promoFields.ends_at, null),
});

const promoPatchFields = v.strictObject({
  name: v.optional(promoFields.name),
  type: v.optional(promoFields.type),
  condition_mode: v.optional(promoFields.condition_mode),
  enabled: v.optional(promoFields.enabled),
  starts_at: v.optional(promoFields.starts_at),
  ends_at: v.optional(promoFields.ends_at),
  targets: v.optional(promoFields.targets),
  tiers: v.optional(promoFields.tiers),
});

/** Any field may change; `tiers` and `targets` are replaced whole. */
export const promoPatchBody = patchBody(promoPatchFields);

export const targetResource = v.object({
  type: v.picklist(TARGET_TYPES),
  id: v.optional(v.number()),
});

export const tierResource = v.object({
  id: v.number(),
  store_id: v.number(),
  promo_id: v.number(),
  min_amount: v.number(),
  reward_type: v.picklist(REWARD_TYPES),
  reward_value: v.nullable(v.number()),
  reward_quantity: v.nullable(v.number()),
  created_at: timestamp,
  updated_at: timestamp,
  targets: v.array(targetResource),
});

export const promoResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  type: v.picklist(PROMO_TYPES),
  condition_mode: v.picklist(CONDITION_MODES),
  enabled: v.boolean(),
  starts_at: timestamp,
  ends_at: v.nullable(timestamp),
  created_at: timestamp,
  updated_at: timestamp,
  targets: v.array(targetResource),
  tiers: v.array(tierResource),
});

export type TargetInput = v.InferOutput<typeof targetInput>;
export type TierInput = v.InferOutput<typeof tierInput>;
export type PromoCreate = v.InferOutput<typeof promoCreateBody>;
export type PromoPatch = v.InferOutput<typeof promoPatchBody>;
export type Target = v.InferOutput<typeof targetResource>;
export type PromoTier = v.InferOutput<typeof tierResource>;
export type Promo = v.InferOutput<typeof promoResource>;

/** A promo that a cart must find whatever its packages: a `STORE` target, of the promo or of a tier (lib/db/cart-index.ts). */
export const targetsWholeStore = (promo: { targets: readonly Target[]; tiers: readonly { targets: readonly Target[] }[] }) =>
  [...promo.targets, ...promo.tiers.flatMap((tier) => tier.targets)].some((target) => target.type === 'STORE');
