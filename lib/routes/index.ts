import type { RouteSpec } from '#lib/http/route.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';
import { chatRoutes } from '#lib/routes/chat.ts';
import { consumerEntries } from '#lib/routes/consumers.ts';
import { coreRoutes } from '#lib/routes/core.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';
import { discountRoutes } from '#lib/routes/discount.ts';
import { imageRoutes } from '#lib/routes/image.ts';
import { jobEntries } from '#lib/routes/jobs.ts';
import { noteRoutes } from '#lib/routes/note.ts';
import { orderRoutes } from '#lib/routes/order.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';
import { promoRoutes } from '#lib/routes/promo.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';
import { variableRoutes } from '#lib/routes/variable.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

/**
 * THE route table, by area: every endpoint, keyed by its function name (`functions/<name>.ts`).
 * The CDK app deploys each area as its own stack; the local server, the OpenAPI document and
 * the route tests read the merged `routes`. Adding an endpoint = a handler file + one entry in
 * one of the area files below; adding an area = its file + one line here.
 */
export const routeAreas = {
  core: coreRoutes,
  buyer: buyerRoutes,
  affiliate: affiliateRoutes,
  catalog: catalogRoutes,
  image: imageRoutes,
  promo: promoRoutes,
  discount: discountRoutes,
  variable: variableRoutes,
  order: orderRoutes,
  note: noteRoutes,
  chat: chatRoutes,
  storefront: storefrontRoutes,
  checkout: checkoutRoutes,
  delivery: deliveryRoutes,
  webhook: webhookRoutes,
  payment: paymentRoutes,
} as const satisfies Record<string, Record<string, RouteSpec>>;

export type RouteArea = keyof typeof routeAreas;

type UnionToIntersection<U> = (U extends unknown ? (union: U) => void : never) extends (intersection: infer I) => void ? I : never;

export const routes: UnionToIntersection<(typeof routeAreas)[RouteArea]> = Object.assign({}, ...Object.values(routeAreas));

export type FunctionName = keyof typeof routes;

export const routeEntries = () => Object.entries(routes) as [FunctionName, RouteSpec][];

/**
 * The route table's family: every function the app deploys (the routes, the scheduled jobs of
 * lib/routes/jobs.ts, the stream and queue consumers of lib/routes/consumers.ts). functions/ holds
 * exactly these files, no side door (test/unit/function-family.test.ts).
 */
export const functionNames = (): string[] => [...routeEntries(), ...jobEntries(), ...consumerEntries()].map(([name]) => name);
