import { loginWithAccessToken } from '#lib/domain/auth.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['auth-verify'], async ({ auth, body }) => loginWithAccessToken(auth.storeId, body.email, body.code));
