import { logout } from '#lib/flows/auth.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { reply } from '#lib/http/reply.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['auth-store-logout'], async ({ auth }) =>
  reply(200, { logged_out: true }, { cookies: [await logout(auth.secret)] }),
);
