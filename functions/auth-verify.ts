import { loginWithAccessToken } from '#lib/flows/auth.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['auth-verify'], async ({ auth, body }) => loginWithAccessToken(auth.storeId, body.email, body.code));
