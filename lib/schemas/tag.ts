import * as v from 'valibot';
import { patchBody, text, timestamp } from '#lib/schemas/common.ts';

/**
 * `color` is "a colour string" in the spec, format not shown. We accept what a storefront can
 * paint without guessing: hex (`#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`) or a CSS colour keyword
 * (letters only, such as `red` or `rebeccapurple`).
 */
export const color = v.pipe(
  v.string('color must be a string'),
  v.trim(),
  v.regex(/^(#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|[a-zA-Z]{3,30})$/, 'color must be a hex colour such as #ff8800 or a CSS colour name'),
);

export const TAG_NAME_MAX = 50;

export const tagCreateBody = v.strictObject({
  name: text('name', TAG_NAME_MAX),
  color,
  apply_to_all_packages: v.optional(v.boolean('apply_to_all_packages must be a boolean')),
});

export const tagPatchBody = patchBody(
  v.strictObject({
    name: v.optional(text('name', TAG_NAME_MAX)),
    color: v.optional(color),
    apply_to_all_packages: v.optional(v.boolean('apply_to_all_packages must be a boolean')),
  }),
);

export const tagResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  color: v.string(),
  apply_to_all_packages: v.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

export type TagCreate = v.InferOutput<typeof tagCreateBody>;
export type TagPatch = v.InferOutput<typeof tagPatchBody>;
export type Tag = v.InferOutput<typeof tagResource>;
