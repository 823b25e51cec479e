import type { RouteSpec } from '#lib/http/route.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';
import { chatRoutes } from '#lib/routes/chat.ts';
import { coreRoutes } from '#lib/routes/core.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';
import { discountRoutes } from '#lib/routes/discount.ts';
import { imageRoutes } from '#lib/routes/image.ts';
import { noteRoutes } from '#lib/routes/note.ts';
import { orderRoutes } from '#lib/routes/order.ts';
import { promoRoutes } from '#lib/routes/promo.ts';
import { variableRoutes } from '#lib/routes/variable.ts';

/**
 * THE route table: every endpoint, keyed by its function name (`functions/<name>.ts`).
 * The CDK stack, the local server, the OpenAPI document and the route tests all read it.
 * Adding an endpoint = a handler file + one entry in one of the area files below.
 */
export const routes = {
  ...coreRoutes,
  ...buyerRoutes,
  ...catalogRoutes,
  ...imageRoutes,
  ...promoRoutes,
  ...discountRoutes,
  ...variableRoutes,
  ...orderRoutes,
  ...noteRoutes,
  ...chatRoutes,
  ...deliveryRoutes,
} as const satisfies Record<string, RouteSpec>;

export type FunctionName = keyof typeof routes;

export const routeEntries = () => Object.entries(routes) as [FunctionName, RouteSpec][];
