import type { GenericSchema } from 'valibot';
import { pageMeta } from '#lib/schemas/common.ts';

/**
 * The credential a route requires (spec: Authentication):
 * - `operator`   `Authorization: Bearer <API_TOKEN>` on /v1/app/...
 * - `apiKey`     `Authorization: Bearer <API_KEY>` holding `scope`
 * - `buyer`      `Authorization: Bearer <ACCESS_TOKEN>` + `x-store-domain`
 * - `buyerStore` only `x-store-domain` (the login that produces an access token)
 * - `buyerOptional` `x-store-domain`, and a buyer's bearer token if one is sent (the checkout: guest or buyer)
 * - `session`    the session cookie on the store's own domain (store found from Host)
 * - `storeHost`  the store's own domain, no session needed (login/logout there)
 * - `public`     nothing
 */
export type CredentialKind = 'operator' | 'apiKey' | 'buyer' | 'buyerStore' | 'buyerOptional' | 'session' | 'storeHost' | 'public';

/**
 * What a function reaches besides its table `access`, each driving its IAM grants: `images` the
 * images bucket, `mail` the mailer, `secret` the server secret of the keyed hashes
 * (lib/server-secret.ts: login codes, cursors, quote ids), the stage's payment secrets key
 * (`provider-secrets-seal`: KMS Encrypt, only for the route that writes provider secrets;
 * `provider-secrets-open`: KMS Decrypt, only for the functions that call providers with them), and
 * `counters` for a read route that may write the COUNT# partitions (see `writesCountPartitions`)
 * without answering a page.
 */
export type ResourceUse = 'images' | 'mail' | 'secret' | 'counters' | 'provider-secrets-seal' | 'provider-secrets-open';

export interface RouteSpec {
  /** `OPTIONS` only for CORS preflights (lib/http/cors.ts): served like any route, left out of the OpenAPI document. */
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'OPTIONS';
  /** Path with `{param}` placeholders, as API Gateway and OpenAPI write it; `{name+}` (API Gateway's greedy variable) matches the rest of the path. */
  path: string;
  /** `api`: the /v1 HTTP API. `store`: the HTTP API behind the stores' own domains. */
  api: 'api' | 'store';
  credential: CredentialKind;
  /** Scope an `apiKey` route requires. */
  scope?: string;
  /** Table access the function is granted (`tableActions`): read-only functions get no write permission, `none` no table at all. */
  access: 'none' | 'read' | 'write';
  uses?: readonly ResourceUse[];
  summary: string;
  /** OpenAPI tag (one per entity). */
  tag: string;
  params?: GenericSchema;
  query?: GenericSchema;
  /** `multipart`: the handler stack reads the body's one part named `file` (the image upload). */
  body?: GenericSchema | 'multipart';
  /** The JSON body may be left out (a request with no body reads as `{}`): a body added to a route that had none keeps its callers working. */
  bodyOptional?: true;
  response?: GenericSchema;
  /** Status of a success; 200 unless said (202: accepted, done later in the background). */
  status?: 200 | 201 | 202 | 204;
  /**
   * A sample request: drives events/<name>.json (and `npm run invoke`). `{{name}}` placeholders
   * are filled by infra/local/invoke-event.ts; `file` is the one part of a multipart body.
   */
  example?: {
    params?: Record<string, string>;
    query?: Record<string, string>;
    headers?: Record<string, string>;
    body?: unknown;
    file?: { filename: string; contentType: string; content: string };
  };
  /**
   * The retry of a request that failed after a fault may simply run again, because running it
   * twice cannot do it twice: its effect is one transaction that also records its
   * Idempotency-Key (an order's: lib/flows/order.ts `placeOrder` finds the order again; any other
   * creation's: lib/db/idempotency.ts `createOnce` answers what it created), or it is a state
   * transition applied once under a condition and answered unchanged when already done (approve,
   * cancel, refund, chargeback: lib/domain/order.ts; a withdrawal paid or rejected:
   * lib/domain/affiliate.ts `settlement`), or joining again answers the membership there is
   * (affiliate join). Other routes answer such a retry 409 `IDEMPOTENCY_ANSWER_LOST` when the
   * first request may have written (lib/http/idempotency.ts).
   */
  rerunsAfterLostAnswer?: true;
  /** The handoff route answers `{error: CODE}` instead of the `{errors: [...]}` envelope. */
  errorStyle?: 'envelope' | 'single';
}

/**
 * The routes that accept `Idempotency-Key` (extensions section 12): every POST of the operator
 * and buyer APIs but the ones that issue a credential or a login code (`/v1/webstore/auth/*`; the
 * store domain's `/auth/*` are on the other API): a kept answer there would hand the access token
 * to whoever sends the same e-mail, code and key again, so a key there is ignored. Their
 * functions may write the idempotency item even when their `access` is `read` (lib/db/table.ts
 * `idempotencyTableActions`).
 *
 * A game server's ack takes one too (issue 28: every client sends a key on every POST that changes
 * something): its answer is small, and the delivery agent derives the key from the ack's lease and
 * results, so the retry of an ack whose answer was lost is answered from the key. The claim takes
 * none: its answer can be several MB, more than a 400 KB item keeps, and a claim retried after a
 * lost answer is already safe (the lost claim's leases lapse unacked and its commands are handed
 * out again with `attempt` + 1; nothing ran them), so a key there is ignored.
 */
export const takesIdempotencyKey = (spec: Pick<RouteSpec, 'method' | 'path' | 'api'>) =>
  spec.api === 'api' &&
  spec.method === 'POST' &&
  (spec.path.startsWith('/v1/app/') || spec.path.startsWith('/v1/webstore/') || spec.path === '/v1/delivery/ack') &&
  !spec.path.startsWith('/v1/webstore/auth/');

/**
 * The routes that answer page mode (a response `{meta: <page meta>, data}`, alone or in a union):
 * their functions may write the first count of a list (lib/db/list-count.ts) even when their
 * `access` is `read` (lib/db/table.ts `listCountTableActions`, on the `COUNT#` partitions only).
 */
export function answersPages(spec: Pick<RouteSpec, 'response'>): boolean {
  const response = spec.response as (GenericSchema & { options?: GenericSchema[] }) | undefined;
  const shapes = response?.options ?? (response ? [response] : []);
  return shapes.some((shape) => (shape as { entries?: Record<string, unknown> }).entries?.meta === pageMeta);
}

/**
 * The routes whose functions may write on the `COUNT#` partitions (lib/db/table.ts
 * `listCountTableActions`) even when their `access` is `read`: every page-mode list (its first
 * count), and the routes that say `uses: ['counters']` (a one-package read deriving a store's
 * first apply-all tag ids, lib/db/tag.ts). Write routes hold that already.
 */
export const writesCountPartitions = (spec: Pick<RouteSpec, 'response' | 'access' | 'uses'>) =>
  spec.access !== 'write' && (answersPages(spec) || (spec.uses?.includes('counters') ?? false));

/**
 * The time each route's function is given (Lambda's timeout, infra/constructs/endpoint-function.ts;
 * API Gateway gives up after 30 s, and a request that takes 10 s is already a bug). One budget for
 * every route: the table sets none per route. The local server gives each request the same
 * (infra/local/server.ts `lambdaContext`), so the per-request deadline (lib/http/handler.ts) fires
 * there as it would on AWS.
 */
export const ROUTE_TIMEOUT_SECONDS = 10;

/** Identity function that keeps each route's literal types (its schemas) for the handler. */
export const route = <const R extends RouteSpec>(spec: R): R => spec;

/**
 * The routes whose request may write its credential's "last used" mark (lib/http/auth.ts): those of
 * API tokens and keys. A route whose `access` is not `write` is granted that one write on the
 * `CRED#` partitions only (lib/db/table.ts `credentialUseTableActions`).
 */
export const notesCredentialUse = (spec: Pick<RouteSpec, 'credential'>) => spec.credential === 'operator' || spec.credential === 'apiKey';
