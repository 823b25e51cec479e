import { TABLE } from '#lib/db/client.ts';
import { deleteOne } from '#lib/db/entity.ts';
import { entitySk, nowIso, padId, storePk } from '#lib/db/keys.ts';
import { orderKey } from '#lib/db/order.ts';
import { nextId } from '#lib/db/sequence.ts';
import { writeGuarded } from '#lib/db/transact.ts';
import { queryBetween } from '#lib/db/query.ts';
import { notFound } from '#lib/errors.ts';
import type { Note, NoteCreate } from '#lib/schemas/note.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Order notes, kept in the order's own item collection, after the order item:
 * `STORE#<s> / ORDER#<order>#NOTE#<note>` (ids zero-padded, so key order is creation order).
 *
 * | access pattern                    | key / calls                                                                         | calls    |
 * |-----------------------------------|-------------------------------------------------------------------------------------|----------|
 * | create                            | sequence ADD `#SEQ#NOTE` + TransactWrite(ConditionCheck order exists, Put the note) | 2        |
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

interface NoteItem extends Note {
  store_id: number;
}

const toNote = (item: NoteItem): Note => ({
  id: item.id,
  order_id: item.order_id,
  user_id: item.user_id,
  content: item.content,
  created_at: item.created_at,
  updated_at: item.updated_at,
});

export async function createNote(storeId: number, orderId: number, credentialId: number, input: NoteCreate): Promise<Note> {
  const id = await nextId(storeId, NOTE);
  const now = nowIso();
  const note: NoteItem = { id, store_id: storeId, order_id: orderId, user_id: credentialId, content: input.content, created_at: now, updated_at: now };
  await writeGuarded([
    {
      item: { ConditionCheck: { TableName: TABLE, Key: orderKey(storeId, orderId), ConditionExpression: 'attribute_exists(pk)' } },
      onConditionFailed: () => notFound('Order'),
    },
    {
      item: { Put: { TableName: TABLE, Item: { ...noteKey(storeId, orderId, id), entity: NOTE, ...note }, ConditionExpression: 'attribute_not_exists(pk)' } },
      onConditionFailed: () => new Error(`note id ${id} allocated twice in store ${storeId}`),
    },
  ]);
  return toNote(note);
}

/** The notes of an order, oldest first; 404 when the order is not in this store. */
export async function listNotes(storeId: number, orderId: number): Promise<Note[]> {
  const orderSk = orderKey(storeId, orderId).sk;
  const items = await queryBetween(storePk(storeId), orderSk, `${notesPrefix(orderId)}~`);
  if (items[0]?.sk !== orderSk) throw notFound('Order');
  return items.filter((item) => item.entity === NOTE).map((item) => toNote(item as unknown as NoteItem));
}

/** 404 `Note not found` for a note that is not on this order of this store (a missing order included). */
export const deleteNote = (storeId: number, orderId: number, noteId: number) => deleteOne(noteKey(storeId, orderId, noteId), 'Note');
