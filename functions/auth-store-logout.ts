import { logout } from '#lib/flows/logout.ts';
import { expiredSessionCookie } from '#lib/http/cookies.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { reply } from '#lib/http/reply.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['auth-store-logout'], async ({ auth }) => {
  await logout(auth.storeId, auth);
  return reply(200, { logged_out: true }, { cookies: [expiredSessionCookie()] });
});
