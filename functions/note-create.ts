import { createNote } from '#lib/db/note.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noteRoutes } from '#lib/routes/note.ts';

export const handler = defineHandler(noteRoutes['note-create'], async ({ auth, params, body }) => createNote(auth.storeId, params.orderId, auth.credentialId, body));
