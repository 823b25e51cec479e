import * as v from 'valibot';
import { pageOf, pageQueryEntries, text, timestamp } from '#lib/schemas/common.ts';

/** The spec leaves the length open: 4000 characters, a long chat message. */
export const CHAT_MESSAGE_MAX = 4000;

/** An order's internal_id in a path; anything else names no order (404). */
export const internalIdString = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/));

export const chatMessageBody = v.strictObject({ message: text('message', CHAT_MESSAGE_MAX) });

/** Page mode; page 1 holds the newest messages, and within a page they run oldest to newest. */
export const chatPageQuery = v.object(pageQueryEntries());

export const USER_TYPES = ['buyer', 'store'] as const;
export const READERS = ['buyer', 'seller'] as const;

/** Chat message (spec). */
export const chatMessageResource = v.object({
  id: v.string(),
  message: v.string(),
  attachments: v.array(v.unknown()),
  user_type: v.picklist(USER_TYPES),
  sender_name: v.nullable(v.string()),
  source: v.nullable(v.string()),
  read_by: v.array(v.picklist(READERS)),
  timestamp,
});

export const chatPage = pageOf(chatMessageResource);

export type ChatMessageInput = v.InferOutput<typeof chatMessageBody>;
export type ChatMessage = v.InferOutput<typeof chatMessageResource>;
export type Reader = (typeof READERS)[number];
