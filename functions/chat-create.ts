import { postStoreMessage } from '#lib/db/chat.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { chatRoutes } from '#lib/routes/chat.ts';

export const handler = defineHandler(chatRoutes['chat-create'], async ({ auth, params, body }) => postStoreMessage(auth.storeId, params.orderId, body.message));
