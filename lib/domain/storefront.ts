import type { Package } from '#lib/schemas/package.ts';
import type { Promo } from '#lib/schemas/promo.ts';
import type { StorefrontPackage } from '#lib/schemas/storefront.ts';
import type { Tag } from '#lib/schemas/tag.ts';
import type { Variable } from '#lib/schemas/variable.ts';

/* What buyers see of the catalog: pure rules, the time a parameter. */

/** Enabled, started, and not ended (`ends_at` null never ends). */
export function promoInForce(promo: Pick<Promo, 'enabled' | 'starts_at' | 'ends_at'>, now: number): boolean {
  return promo.enabled && Date.parse(promo.starts_at) <= now && (promo.ends_at === null || Date.parse(promo.ends_at) > now);
}

/** A checkout variable applies to every package (`applies_to` null) or to those it lists. */
export const variableAppliesTo = (variable: Pick<Variable, 'applies_to'>, packageId: number) => variable.applies_to === null || variable.applies_to.includes(packageId);

/**
 * The storefront shape of an enabled package: its shown tags, its stock as the client reads it,
 * and the checkout variables that apply to it as `fields` (active options only). Command
 * templates never leave the operator's API.
 */
export function toStorefrontPackage(pkg: Omit<Package, 'tags'>, tags: readonly Tag[], variables: readonly Variable[]): StorefrontPackage {
  return {
    id: pkg.id,
    name: pkg.name,
    description: pkg.description,
    price: pkg.price,
    enabled: pkg.enabled,
    category_id: pkg.category_id,
    parent_id: pkg.parent_id,
    image: pkg.image,
    tags: tags.map(({ id, name, color }) => ({ id, name, color })),
    stock: { quantity: pkg.stock, available: pkg.stock === null || pkg.stock > 0 },
    fields: variables
      .filter((variable) => variableAppliesTo(variable, pkg.id))
      .map(({ id, name, description, type, required, regex, options }) => ({ id, name, description, type, required, regex, options: options ?? [] })),
  };
}

/**
 * The storefront's promos in force at `now` (ids, in id order) and until when that answer holds:
 * the earliest start or end of an enabled promo after `now` (null: none comes), when the set may
 * change without any write.
 */
export function inForceAt(promos: readonly Pick<Promo, 'id' | 'enabled' | 'starts_at' | 'ends_at'>[], now: number): { ids: number[]; until: string | null } {
  const ids = promos.filter((promo) => promoInForce(promo, now)).map((promo) => promo.id);
  const boundaries = promos
    .filter((promo) => promo.enabled)
    .flatMap((promo) => [Date.parse(promo.starts_at), promo.ends_at === null ? Number.NaN : Date.parse(promo.ends_at)])
    .filter((at) => Number.isFinite(at) && at > now);
  return { ids: ids.sort((a, b) => a - b), until: boundaries.length === 0 ? null : new Date(Math.min(...boundaries)).toISOString() };
}
