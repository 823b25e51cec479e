import { listNotes } from '#lib/db/note.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noteRoutes } from '#lib/routes/note.ts';

export const handler = defineHandler(noteRoutes['note-list'], async ({ auth, params }) => listNotes(auth.storeId, params.orderId));
