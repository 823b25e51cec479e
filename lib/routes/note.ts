import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { idParams, idString } from '#lib/schemas/common.ts';
import { noteCreateBody, noteResource } from '#lib/schemas/note.ts';

/** Notes on orders (operator). */
export const noteRoutes = {
  'note-create': route({
    method: 'POST', path: '/v1/app/order/{orderId}/note', api: 'api', credential: 'operator', access: 'write', tag: 'Order note', rerunsAfterLostAnswer: true,
    summary: 'Add a note to an order (content 1-2000 characters); user_id is the API token that wrote it',
    params: idParams('orderId'), body: noteCreateBody, response: noteResource,
    example: { body: { content: 'Customer asked for delivery after 18:00' } },
  }),
  'note-list': route({
    method: 'GET', path: '/v1/app/order/{orderId}/note', api: 'api', credential: 'operator', access: 'read', tag: 'Order note',
    summary: 'The notes of an order, oldest first (an array)', params: idParams('orderId'), response: v.array(noteResource),
  }),
  'note-delete': route({
    method: 'DELETE', path: '/v1/app/order/{orderId}/note/{noteId}', api: 'api', credential: 'operator', access: 'write', tag: 'Order note',
    summary: 'Delete a note of an order', params: v.object({ orderId: idString, noteId: idString }), status: 204,
  }),
} as const;
