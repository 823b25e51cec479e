import { updateCustomer } from '#lib/db/customer.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['customer-me-update'], async ({ auth, body }) => updateCustomer(auth.storeId, auth.customerId, body));
