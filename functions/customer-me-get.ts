import { getCustomer } from '#lib/db/customer.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['customer-me-get'], async ({ auth }) => getCustomer(auth.storeId, auth.customerId));
