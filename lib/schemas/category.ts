import * as v from 'valibot';
import { patchBody, text, timestamp } from '#lib/schemas/common.ts';

export const CATEGORY_NAME_MAX = 100;

export const categoryCreateBody = v.strictObject({
  name: text('name', CATEGORY_NAME_MAX),
});

const categoryPatchFields = v.strictObject({
  name: v.optional(text('name', CATEGORY_NAME_MAX)),
});

export const categoryPatchBody = patchBody(categoryPatchFields);

export const categoryResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  created_at: timestamp,
  updated_at: timestamp,
});

export type CategoryCreate = v.InferOutput<typeof categoryCreateBody>;
export type CategoryPatch = v.InferOutput<typeof categoryPatchBody>;
export type Category = v.InferOutput<typeof categoryResource>;
