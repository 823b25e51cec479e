import { deleteOne, fieldsOf, newItemWrite, readItem, type StoredItem } from '#lib/db/entity.ts';
import { createOnce } from '#lib/db/idempotency.ts';
import { entitySk, nowIso, padId, storePk } from '#lib/db/keys.ts';
import { orderKey } from '#lib/db/order.ts';
import { queryBetween } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { check, writeGuarded } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import type { Note, NoteCreate } from '#lib/schemas/note.ts';

/**
 * Order notes, kept in the order's own item collection, after the order item:
 * `STORE#<s> / ORDER#<order>#NOTE#<note>` (ids zero-padded, so key order is creation order).
 *
 * | access pattern                    | key / calls                                                                         | calls    |
 * |-----------------------------------|-------------------------------------------------------------------------------------|----------|
 * | create                            | sequence ADD `#SEQ#NOTE` + TransactWrite(ConditionCheck order exists, Put the note, | 2        |
 * |                                   | + the Idempotency-Key's record of it: lib/db/idempotency.ts `createOnce`)           |          |
 * | create again after a lost answer  | GetItem of the note recorded on the key                                             | 1        |
 * | list of an order, oldest first    | one consistent Query `sk BETWEEN ORDER#<o> AND ORDER#<o>#NOTE#~`: the order item    | 1 per MB |
 * |                                   | (proves the order exists: 404 otherwise) and its notes                              |          |
 * | delete                            | DeleteItem conditioned on existence                                                 | 1        |
 *
 * A note on a missing order uses up a note id (the sequence moves before the transaction
 * refuses): ids have gaps, nothing else is written. Notes are read consistently, so a list
 * right after a create shows the note.
 */
const NOTE = ENTITY.NOTE;

const notesPrefix = (orderId: number) => `${entitySk(ENTITY.ORDER, orderId)}#${NOTE}#`;
const noteKey = (storeId: number, orderId: number, noteId: number) => ({ pk: storePk(storeId), sk: `${notesPrefix(orderId)}${padId(noteId)}` });

/** A note as stored: the response's fields and its store. */
interface NoteRecord extends Note {
  store_id: number;
}

const noteItem = (note: NoteRecord) => ({ ...noteKey(note.store_id, note.order_id, note.id), entity: NOTE, ...note });

function noteFromItem(item: StoredItem): NoteRecord {
  const field = fieldsOf(item, NOTE);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    order_id: field.number('order_id'),
    user_id: field.number('user_id'),
    content: field.string('content'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

const noteResponse = (note: NoteRecord): Note => ({
  id: note.id,
  order_id: note.order_id,
  user_id: note.user_id,
  content: note.content,
  created_at: note.created_at,
  updated_at: note.updated_at,
});

export async function createNote(storeId: number, orderId: number, credentialId: number, input: NoteCreate): Promise<Note> {
  return createOnce(
    (noteId: number) => getNote(storeId, orderId, noteId),
    async (recordOnKey) => {
      const id = await nextId(storeId, NOTE);
      const now = nowIso();
      const note: NoteRecord = { id, store_id: storeId, order_id: orderId, user_id: credentialId, content: input.content, created_at: now, updated_at: now };
      await writeGuarded([
        { item: check({ Key: orderKey(storeId, orderId), ConditionExpression: 'attribute_exists(pk)' }), onConditionFailed: () => notFound('Order') },
        newItemWrite(noteItem(note)),
        ...recordOnKey(id),
      ]);
      return noteResponse(note);
    },
  );
}

/** One note of an order (consistent; 404 when missing): what its creation answered. */
async function getNote(storeId: number, orderId: number, noteId: number): Promise<Note> {
  const item = await readItem(noteKey(storeId, orderId, noteId), true);
  if (!item) throw notFound('Note');
  return noteResponse(noteFromItem(item));
}

/** The notes of an order, oldest first; 404 when the order is not in this store. */
export async function listNotes(storeId: number, orderId: number): Promise<Note[]> {
  const orderSk = orderKey(storeId, orderId).sk;
  const items = await queryBetween(storePk(storeId), orderSk, `${notesPrefix(orderId)}~`);
  if (items[0]?.sk !== orderSk) throw notFound('Order');
  return items.filter((item) => item.entity === NOTE).map((item) => noteResponse(noteFromItem(item)));
}

/** 404 `Note not found` for a note that is not on this order of this store (a missing order included). */
export const deleteNote = (storeId: number, orderId: number, noteId: number) => deleteOne(noteKey(storeId, orderId, noteId), 'Note');
