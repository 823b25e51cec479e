import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { CHAT_MESSAGE_MAX, chatMessageBody, chatPageQuery, internalIdString } from '#lib/schemas/chat.ts';
import { NOTE_CONTENT_MAX, noteCreateBody } from '#lib/schemas/note.ts';

describe('chat and note schemas', () => {
  it('takes internal_ids of base64url characters only (anything else names no order)', () => {
    for (const id of ['AbCdEfGhIjKlMnOpQrStUv', 'a', 'x-_9']) expect(v.is(internalIdString, id), id).toBe(true);
    for (const id of ['', 'a.b', 'a#CHAT', 'a b', 'x'.repeat(65), 'é']) expect(v.is(internalIdString, id), id).toBe(false);
  });

  it('bounds and trims messages and notes', () => {
    expect(v.parse(chatMessageBody, { message: ' hi ' })).toEqual({ message: 'hi' });
    expect(v.is(chatMessageBody, { message: 'x'.repeat(CHAT_MESSAGE_MAX) })).toBe(true);
    expect(v.is(chatMessageBody, { message: 'x'.repeat(CHAT_MESSAGE_MAX + 1) })).toBe(false);
    expect(v.is(chatMessageBody, { message: ' ' })).toBe(false);
    expect(v.is(noteCreateBody, { content: 'x'.repeat(NOTE_CONTENT_MAX) })).toBe(true);
    expect(v.is(noteCreateBody, { content: 'x'.repeat(NOTE_CONTENT_MAX + 1) })).toBe(false);
  });

  it('pages 20 messages by default, at most 100', () => {
    expect(v.parse(chatPageQuery, {})).toEqual({ page: 1, limit: 20 });
    expect(v.is(chatPageQuery, { limit: '100' })).toBe(true);
    expect(v.is(chatPageQuery, { limit: '101' })).toBe(false);
  });
});
