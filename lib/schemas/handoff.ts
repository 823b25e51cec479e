import * as v from 'valibot';
import { timestamp } from '#lib/schemas/common.ts';

export const HANDOFF_TTL_SECONDS = 60;

export const handoffResponse = v.object({ handoff: v.string(), expires_in: v.number() });

/**
 * Only a string is required here: a malformed, used, expired or foreign handoff is answered
 * alike (400 HANDOFF_INVALID) by the exchange itself.
 */
export const identifyBody = v.strictObject({ handoff: v.string('handoff must be a string') });

/** The handoff must never travel in a URL (logs, proxies, history): any query is refused. */
export const identifyQuery = v.strictObject({}, 'The handoff goes in the JSON body, never in the URL; this endpoint takes no query parameters');

export const customerIdentity = v.object({
  store_id: v.number(),
  email: v.string(),
  name: v.string(),
  avatar: v.nullable(v.string()),
  social_id: v.nullable(v.string()),
});

export const identifyResponse = v.object({ customer: v.object({ ...customerIdentity.entries, issued_at: timestamp }) });

export type CustomerIdentity = v.InferOutput<typeof customerIdentity>;
export type IdentifyResult = v.InferOutput<typeof identifyResponse>;
