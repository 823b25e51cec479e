import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Key builders shared by the entity modules. Ids are zero-padded in sort keys so that a
 * Query returns items in id order (string order == numeric order).
 */
export const ID_WIDTH = 12;

export function padId(id: number): string {
  return String(id).padStart(ID_WIDTH, '0');
}

export const storePk = (storeId: number) => `${ENTITY.STORE}#${storeId}`;

/** Sort key of one entity of a store: `TAG#000000000042`. */
export const entitySk = (entity: string, id: number) => `${entity}#${padId(id)}`;

/** Attributes that exist for the table's sake and never reach a response. */
const INTERNAL_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk', 'expires_epoch', 'entity'] as const;

export function stripKeys<T extends Record<string, unknown>>(item: T): Omit<T, (typeof INTERNAL_ATTRIBUTES)[number]> {
  const copy: Record<string, unknown> = { ...item };
  for (const name of INTERNAL_ATTRIBUTES) delete copy[name];
  return copy as Omit<T, (typeof INTERNAL_ATTRIBUTES)[number]>;
}

/** The request's time (lib/clock.ts: the wall clock, or the local stack's pinned time). */
export { nowIso } from '#lib/clock.ts';

/** Timestamps are returned in UTC with `Z`; inputs may carry any offset. */
export const toUtcIso = (value: string) => new Date(value).toISOString();
