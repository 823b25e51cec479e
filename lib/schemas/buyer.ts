import * as v from 'valibot';
import { patchBody, text, timestamp } from '#lib/schemas/common.ts';

/** The customer's identity in a store: compared and stored lower-cased. */
export const email = v.pipe(
  v.string('email must be a string'),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(254, 'email must be at most 254 characters'),
  v.email('email must be an e-mail address'),
);

export const LOGIN_CODE_LENGTH = 6;

export const loginBody = v.strictObject({ email });

export const verifyBody = v.strictObject({
  email,
  code: v.pipe(v.string('code must be a string'), v.trim(), v.regex(/^\d{6}$/, `code must be the ${LOGIN_CODE_LENGTH}-digit code from the e-mail`)),
});

/** Says a code went out; never the code itself. */
export const loginResponse = v.object({ sent: v.literal(true), expires_in: v.number() });

export const CUSTOMER_NAME_MAX = 100;

/** Avatar: an http(s) URL, so that a page cannot be handed a `javascript:` address. */
const avatar = v.nullable(
  v.pipe(
    v.string('avatar must be a URL or null'),
    v.trim(),
    v.maxLength(2048, 'avatar must be at most 2048 characters'),
    v.regex(/^https?:\/\/\S+$/i, 'avatar must be an http or https URL'),
    v.url('avatar must be an http or https URL'),
  ),
);

const socialId = v.nullable(text('social_id', 64));

export const customerPatchBody = patchBody(
  v.strictObject({
    name: v.optional(text('name', CUSTOMER_NAME_MAX)),
    avatar: v.optional(avatar),
    social_id: v.optional(socialId),
  }),
);

export const customerResource = v.object({
  id: v.number(),
  store_id: v.number(),
  email: v.string(),
  name: v.string(),
  avatar: v.nullable(v.string()),
  social_id: v.nullable(v.string()),
  created_at: timestamp,
  updated_at: timestamp,
});

export const verifyResponse = v.object({
  access_token: v.string(),
  token_type: v.literal('Bearer'),
  expires_in: v.number(),
  customer: customerResource,
});

/** The store-domain verify: the session travels only in the HttpOnly cookie, never in the body. */
export const sessionVerifyResponse = v.object({ expires_in: v.number(), customer: customerResource });

export type CustomerPatch = v.InferOutput<typeof customerPatchBody>;
export type Customer = v.InferOutput<typeof customerResource>;
