import { parse } from 'valibot';
import { loginWithSession } from '#lib/flows/auth.ts';
import { sessionCookie } from '#lib/http/cookies.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { reply } from '#lib/http/reply.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

const route = buyerRoutes['auth-store-verify'];

export const handler = defineHandler(route, async ({ auth, body }) => {
  const { session, customer } = await loginWithSession(auth.storeId, body.email, body.code, auth.sessionOfStore ? auth.secret : undefined);
  return reply(200, parse(route.response, { expires_in: session.maxAgeSeconds, customer }), { cookies: [sessionCookie(session.secret, session.maxAgeSeconds)] });
});
