import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { config } from '#lib/config.ts';
import { findDomain } from '#lib/db/credential.ts';
import { isAllowedOriginOfAStore } from '#lib/db/store.ts';
import { HttpError } from '#lib/errors.ts';
import { Reply } from '#lib/http/reply.ts';
import type { RouteSpec } from '#lib/http/route.ts';

/**
 * CORS for the routes a store's web pages call from a browser (/v1/webstore, credential `buyer`,
 * `buyerStore` or `buyerOptional`). An origin is allowed for a store when it is `https://<store domain>`,
 * `http://<store domain>[:port]` on the local stack (plain http there), or one of the store's
 * `allowed_origins`.
 *
 * - Responses carry `Vary: Origin` and, for an allowed origin, `Access-Control-Allow-Origin`
 *   naming it. The store's policy comes from the domain lookup the credential check makes
 *   anyway (lib/http/auth.ts), so CORS costs no read; errors after that lookup (401, 404 of a
 *   package, 422) carry the headers too, so a page can read why it failed.
 * - No `Access-Control-Allow-Credentials`: these routes take bearer tokens, never cookies (the
 *   session cookie lives only on the store's own domain, same-origin).
 * - Preflights (OPTIONS) carry no x-store-domain: they are answered from the Origin alone
 *   (`answerPreflight`): 204 with the allow headers when the origin belongs to some store, 403
 *   in the envelope without them otherwise. Calls: 1 GetItem when the origin is a store domain
 *   origin, else 1 Query of the origin items (2 in all).
 */
export interface StoreOrigins {
  domain: string;
  allowedOrigins: readonly string[];
}

const ALLOWED_METHODS = 'GET, POST, PATCH, PUT, DELETE';
const ALLOWED_HEADERS = 'authorization, content-type, x-store-domain, idempotency-key';
/** How long a browser reuses a preflight: an origin removed from a store stops working within 10 minutes. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

const ORIGIN = /^(https?):\/\/([^/:]+)(:\d+)?$/;

const originOf = (event: APIGatewayProxyEventV2) => event.headers?.origin;

/** The host an origin names, when that origin may be its store domain's own web origin. */
function storeDomainOriginHost(origin: string): string | undefined {
  const [, scheme, host, port] = ORIGIN.exec(origin) ?? [];
  if (scheme === 'https' && port === undefined) return host;
  if (scheme === 'http' && config.plainHttpStoreOrigins) return host;
  return undefined;
}

export const originAllowed = (origin: string | undefined, store: StoreOrigins) =>
  origin !== undefined && (storeDomainOriginHost(origin) === store.domain || store.allowedOrigins.includes(origin));

const policies = new WeakMap<APIGatewayProxyEventV2, StoreOrigins>();

/** Called by the credential check once it knows the request's store. */
export const rememberStoreOrigins = (event: APIGatewayProxyEventV2, store: StoreOrigins) => policies.set(event, store);

/** Also applied by lib/http/idempotency.ts to a replayed answer, which skips the after hooks. */
export function withCorsHeaders(event: APIGatewayProxyEventV2, response: APIGatewayProxyResultV2 | null | undefined): void {
  if (!response || typeof response !== 'object') return;
  const origin = originOf(event);
  const store = policies.get(event);
  const allowed = store !== undefined && originAllowed(origin, store);
  response.headers = { ...response.headers, vary: 'Origin', ...(allowed ? { 'access-control-allow-origin': origin! } : {}) };
}

/** The middleware of the routes browsers call (none for the others). */
export function cors(route: RouteSpec): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyResultV2> | undefined {
  if (route.credential !== 'buyer' && route.credential !== 'buyerStore' && route.credential !== 'buyerOptional') return undefined;
  return {
    after: async (request) => withCorsHeaders(request.event, request.response),
    onError: async (request) => withCorsHeaders(request.event, request.response),
  };
}

async function belongsToAStore(origin: string): Promise<boolean> {
  const host = storeDomainOriginHost(origin);
  if (host !== undefined && (await findDomain(host)) !== undefined) return true;
  return isAllowedOriginOfAStore(origin);
}

/** OPTIONS on the storefront routes: allowed when the Origin is some store's (see the header). */
export async function answerPreflight(event: APIGatewayProxyEventV2): Promise<Reply> {
  const origin = originOf(event)?.toLowerCase();
  if (!origin || !ORIGIN.test(origin) || !(await belongsToAStore(origin))) {
    throw new HttpError(403, { message: 'This origin may not call the storefront', code: 'ORIGIN_NOT_ALLOWED' }, { vary: 'Origin' });
  }
  return new Reply(204, undefined, {
    vary: 'Origin',
    'access-control-allow-origin': origin,
    'access-control-allow-methods': ALLOWED_METHODS,
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
  });
}
