import { listBuyerChat } from '#lib/db/chat.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { chatRoutes } from '#lib/routes/chat.ts';

export const handler = defineHandler(chatRoutes['chat-buyer-list'], async ({ auth, params, query, event }) =>
  pageAnswer(await listBuyerChat(auth.storeId, auth.customerId, params.internalId, query), query.page, query.limit, requestLocation(event)),
);
