import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

/**
 * A typed client of store-api: openapi-fetch over the types openapi-typescript generates from the
 * API's OpenAPI document (schema.d.ts, rewritten by `npm run generate`). Every path, parameter,
 * body and answer is checked by tsc; the calls are plain `fetch`.
 */
export type { components, paths };
/** The API's named schemas: `Schemas['PackageResource']`, `Schemas['OrderResource']`... */
export type Schemas = components['schemas'];
export type StoreApiClient = Client<paths>;

export interface StoreApiClientOptions {
  /** The API's origin, without `/v1` (paths carry it): `http://127.0.0.1:3000` on the local stack. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer` on every call: an operator's API token, an API key, a buyer's access token. */
  token?: string;
  /** For tests or other runtimes: the `fetch` to call. */
  fetch?: (request: Request) => Promise<Response>;
}

export function createStoreApiClient({ baseUrl, token, fetch }: StoreApiClientOptions): StoreApiClient {
  return createClient<paths>({ baseUrl, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}), ...(fetch ? { fetch } : {}) });
}
