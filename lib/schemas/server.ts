import * as v from 'valibot';
import { patchBody, text, timestamp } from '#lib/schemas/common.ts';

/** Game servers: where a store's delivery commands run (extensions section 9). */
export const SERVER_NAME_MAX = 100;

export const serverCreateBody = v.strictObject({ name: text('name', SERVER_NAME_MAX) });

export const serverPatchBody = patchBody(v.strictObject({ name: v.optional(text('name', SERVER_NAME_MAX)) }));

export const serverResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  /** When a key of this server last claimed (null until it first does). */
  last_seen_at: v.nullable(timestamp),
  created_at: timestamp,
  updated_at: timestamp,
});

export const serverKeyResource = v.object({
  key: v.pipe(v.string(), v.description('Shown once: only its SHA-256 is stored. Scope `delivery`, bound to this server.')),
});

export type ServerCreate = v.InferOutput<typeof serverCreateBody>;
export type ServerPatch = v.InferOutput<typeof serverPatchBody>;
export type Server = v.InferOutput<typeof serverResource>;
