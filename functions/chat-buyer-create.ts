import { postBuyerMessage } from '#lib/db/chat.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { chatRoutes } from '#lib/routes/chat.ts';

export const handler = defineHandler(chatRoutes['chat-buyer-create'], async ({ auth, params, body }) =>
  postBuyerMessage(auth.storeId, auth.customerId, params.internalId, body.message),
);
