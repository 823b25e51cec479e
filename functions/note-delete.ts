import { deleteNote } from '#lib/db/note.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { noteRoutes } from '#lib/routes/note.ts';

export const handler = defineHandler(noteRoutes['note-delete'], async ({ auth, params }) => {
  await deleteNote(auth.storeId, params.orderId, params.noteId);
  return noContent();
});
