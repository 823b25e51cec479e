import { requestLoginCode } from '#lib/flows/login-code.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['auth-store-login'], async ({ auth, body }) => requestLoginCode(auth.storeId, auth.domain, body.email));
