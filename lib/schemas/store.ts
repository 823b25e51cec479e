import * as v from 'valibot';
import { patchBody, storableAmount, text, timestamp } from '#lib/schemas/common.ts';

/** A lower-case host name: labels of letters, digits and hyphens (`demo.localhost`, `shop.example.com`). */
export const domain = v.pipe(
  v.string('domain must be a string'),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(253, 'domain must be at most 253 characters'),
  v.regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/, 'domain must be a host name such as shop.example.com'),
);

const percent = v.pipe(v.number('percent_commission must be a number'), v.minValue(0, 'percent_commission must be at least 0'), v.maxValue(100, 'percent_commission must be at most 100'));
const money = (name: string) => storableAmount(name, v.pipe(v.number(`${name} must be a number`), v.minValue(0, `${name} must be at least 0`)));

export const affiliateSettingsPatch = patchBody(
  v.strictObject({
    self_registration: v.optional(v.boolean('self_registration must be a boolean')),
    percent_commission: v.optional(percent),
    min_withdraw: v.optional(money('min_withdraw')),
  }),
);

export const storePatchBody = patchBody(
  v.strictObject({
    name: v.optional(text('name', 100)),
    domain: v.optional(domain),
    affiliate: v.optional(affiliateSettingsPatch),
  }),
);

export const storeResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  domain: v.string(),
  affiliate: v.object({ self_registration: v.boolean(), percent_commission: v.number(), min_withdraw: v.number() }),
  created_at: timestamp,
  updated_at: timestamp,
});

export type StorePatchBody = v.InferOutput<typeof storePatchBody>;
