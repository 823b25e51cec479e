import { resendOrderCommands } from '#lib/flows/order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['command-resend'], async ({ auth, params }) => resendOrderCommands(auth.storeId, params.orderId));
