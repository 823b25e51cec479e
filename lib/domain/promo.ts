import type { Reference } from '#lib/schemas/common.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { HttpError, type ErrorDetail } from '#lib/errors.ts';
import type { Promo, PromoTier, Target, TargetInput, TierInput } from '#lib/schemas/promo.ts';

/**
 * The promo rules that tie fields together. The same code judges a creation and the promo a
 * PATCH would produce, so an update can never reach a state a creation could not.
 *
 * Beyond store-api.md (decisions where it is silent):
 * - `ends_at` must be later than `starts_at` (an empty window is a mistake, not a promo);
 * - under `QUANTITY` a tier minimum is a whole number of units, at least 1; under `VALUE` it
 *   is an amount above 0;
 * - a target may not be listed twice, and a `STORE` target (the whole store) stands alone;
 * - `reward_quantity` and tier `targets` are for `BUY_X_PAY_Y` only: a `PROGRESSIVE` tier that
 *   sends them is refused rather than silently stripped;
 * - a `BUY_X_PAY_Y` tier needs 1 to 10 `PRODUCT` targets (the spec's "required").
 */
export interface PromoDraft {
  type: 'PROGRESSIVE' | 'BUY_X_PAY_Y';
  condition_mode: 'QUANTITY' | 'VALUE';
  starts_at: string;
  ends_at: string | null;
  targets: readonly TargetInput[];
  tiers: readonly TierInput[];
}

const violation = (field: string, message: string): ErrorDetail => ({ message, code: 'VALIDATION_FAILED', field });

function targetViolations(targets: readonly TargetInput[], path: string, productsOnly: boolean): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  const seen = new Set<string>();
  targets.forEach((target, index) => {
    const at = `${path}.${index}`;
    if (productsOnly && target.type !== 'PRODUCT') found.push(violation(`${at}.type`, 'Reward targets of a tier must be of type PRODUCT'));
    if (target.type === 'STORE' && target.id != null) found.push(violation(`${at}.id`, 'A STORE target covers the whole store and carries no id'));
    if (target.type !== 'STORE' && target.id == null) found.push(violation(`${at}.id`, `id is required for a ${target.type} target`));
    const key = `${target.type}#${target.id ?? ''}`;
    if (seen.has(key)) found.push(violation(at, 'This target is listed twice'));
    seen.add(key);
  });
  if (targets.length > 1 && targets.some((target) => target.type === 'STORE')) {
    found.push(violation(path, 'A STORE target covers the whole store and cannot be combined with other targets'));
  }
  return found;
}

function tierViolations(draft: PromoDraft, tier: TierInput, at: string): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  const buyXPayY = draft.type === 'BUY_X_PAY_Y';
  if (draft.condition_mode === 'QUANTITY' && (!Number.isInteger(tier.min_amount) || tier.min_amount < 1)) {
    found.push(violation(`${at}.min_amount`, 'With condition_mode QUANTITY, min_amount is a whole number of units, at least 1'));
  }
  if (draft.condition_mode === 'VALUE' && tier.min_amount <= 0) {
    found.push(violation(`${at}.min_amount`, 'With condition_mode VALUE, min_amount must be greater than 0'));
  }

  if (tier.reward_type === 'FREE') {
    if (!buyXPayY) found.push(violation(`${at}.reward_type`, 'reward_type FREE is valid only for BUY_X_PAY_Y promos'));
    if (tier.reward_value != null) found.push(violation(`${at}.reward_value`, 'reward_value must be null or omitted when reward_type is FREE'));
  } else if (tier.reward_value == null) {
    found.push(violation(`${at}.reward_value`, `reward_value is required when reward_type is ${tier.reward_type}`));
  } else if (tier.reward_type === 'PERCENTAGE' && tier.reward_value > 100) {
    found.push(violation(`${at}.reward_value`, 'A PERCENTAGE reward_value is at most 100'));
  }

  const targets = tier.targets ?? [];
  if (buyXPayY) {
    if (tier.reward_quantity == null) found.push(violation(`${at}.reward_quantity`, 'reward_quantity is required for BUY_X_PAY_Y'));
    if (targets.length === 0) found.push(violation(`${at}.targets`, 'A BUY_X_PAY_Y tier needs 1 to 10 PRODUCT targets'));
    found.push(...targetViolations(targets, `${at}.targets`, true));
  } else {
    if (tier.reward_quantity != null) found.push(violation(`${at}.reward_quantity`, 'reward_quantity applies only to BUY_X_PAY_Y promos'));
    if (targets.length > 0) found.push(violation(`${at}.targets`, 'Tier targets apply only to BUY_X_PAY_Y promos'));
  }
  return found;
}

/** Every rule the promo breaks, each naming its input path; empty when the promo is valid. */
export function promoRuleViolations(draft: PromoDraft): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  if (draft.ends_at !== null && Date.parse(draft.ends_at) <= Date.parse(draft.starts_at)) {
    found.push(violation('ends_at', 'ends_at must be later than starts_at'));
  }
  found.push(...targetViolations(draft.targets, 'targets', false));
  if (draft.type === 'BUY_X_PAY_Y' && draft.tiers.length !== 1) {
    found.push(violation('tiers', 'A BUY_X_PAY_Y promo takes exactly one tier'));
  }
  const minimums = new Set<number>();
  draft.tiers.forEach((tier, index) => {
    const at = `tiers.${index}`;
    if (minimums.has(tier.min_amount)) found.push(violation(`${at}.min_amount`, `Each tier needs a different min_amount; ${tier.min_amount} is repeated`));
    minimums.add(tier.min_amount);
    found.push(...tierViolations(draft, tier, at));
  });
  return found;
}

/** 422 listing every rule the promo breaks. */
export function assertPromoRules(draft: PromoDraft): void {
  const violations = promoRuleViolations(draft);
  if (violations.length > 0) throw new HttpError(422, violations);
}

/** A target as stored and returned: a STORE target has no `id` at all. */
export const normalTarget = (target: TargetInput): Target => (target.type === 'STORE' ? { type: 'STORE' } : { type: target.type, id: target.id as number });

/** The catalog items a (valid) promo refers to, each with the input path that named it. */
export function promoReferences(draft: Pick<PromoDraft, 'targets' | 'tiers'>): Reference[] {
  const refs: Reference[] = [];
  const add = (target: TargetInput, field: string) => {
    if (target.type === 'STORE' || target.id == null) return;
    refs.push({ kind: target.type === 'PRODUCT' ? ENTITY.PACKAGE : ENTITY.CATEGORY, id: target.id, field });
  };
  draft.targets.forEach((target, index) => add(target, `targets.${index}.id`));
  draft.tiers.forEach((tier, tierIndex) => (tier.targets ?? []).forEach((target, index) => add(target, `tiers.${tierIndex}.targets.${index}.id`)));
  return refs;
}

const tierContent = (tier: TierInput) => ({
  min_amount: tier.min_amount,
  reward_type: tier.reward_type,
  reward_value: tier.reward_type === 'FREE' ? null : (tier.reward_value ?? null),
  reward_quantity: tier.reward_quantity ?? null,
  targets: (tier.targets ?? []).map(normalTarget),
});

const sameContent = (a: ReturnType<typeof tierContent>, b: PromoTier) => JSON.stringify(a) === JSON.stringify(tierContent(b));

/** The shape the rules and reference counting read, from a stored promo. */
export const draftOf = (promo: Promo): PromoDraft => ({ ...promo, tiers: promo.tiers.map(tierContent) });

/** How many of `inputs` need a new tier id: those whose minimum matches no current tier. */
export function newTierCount(inputs: readonly TierInput[], current: readonly PromoTier[]): number {
  const kept = new Set(current.map((tier) => tier.min_amount));
  return inputs.filter((tier) => !kept.has(tier.min_amount)).length;
}

/**
 * The stored tiers for `inputs`, smallest minimum first. Tiers whose minimum matches one of
 * `current` keep its id and created_at (and its updated_at when nothing else changed); the
 * others are numbered from `firstTierId` (allocated for `newTierCount` of them).
 */
export function buildTiers(ids: { storeId: number; promoId: number; firstTierId: number }, inputs: readonly TierInput[], current: readonly PromoTier[], now: string): PromoTier[] {
  const kept = new Map(current.map((tier) => [tier.min_amount, tier]));
  let nextTierId = ids.firstTierId;
  const tiers = inputs.map((input): PromoTier => {
    const content = tierContent(input);
    const previous = kept.get(input.min_amount);
    return {
      id: previous?.id ?? nextTierId++,
      store_id: ids.storeId,
      promo_id: ids.promoId,
      ...content,
      created_at: previous?.created_at ?? now,
      updated_at: previous && sameContent(content, previous) ? previous.updated_at : now,
    };
  });
  return tiers.sort((a, b) => a.min_amount - b.min_amount);
}
