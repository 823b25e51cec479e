import * as v from 'valibot';
import { text, timestamp } from '#lib/schemas/common.ts';

/** The spec leaves the length open; 2000 characters holds any note an operator writes by hand. */
export const NOTE_CONTENT_MAX = 2000;

export const noteCreateBody = v.strictObject({ content: text('content', NOTE_CONTENT_MAX) });

/** Order note (spec). `user_id` is the id of the operator credential (API token) that wrote it. */
export const noteResource = v.object({
  id: v.number(),
  order_id: v.number(),
  user_id: v.number(),
  content: v.string(),
  created_at: timestamp,
  updated_at: timestamp,
});

export type NoteCreate = v.InferOutput<typeof noteCreateBody>;
export type Note = v.InferOutput<typeof noteResource>;
