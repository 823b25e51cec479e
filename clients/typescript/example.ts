import { createStoreApiClient, type Schemas } from './index.ts';

/**
 * What an integrator writes with the client (README.md): the operator's catalog, the storefront of
 * a store's domain, a buyer's checkout. Compiled by `npm run typecheck` and by
 * test/unit/openapi-client.test.ts, so a change of the API that breaks it breaks the build.
 */
export async function operatorPackages(baseUrl: string, apiToken: string): Promise<Schemas['PackageResource'][]> {
  const operator = createStoreApiClient({ baseUrl, token: apiToken });
  const { data, error } = await operator.GET('/v1/app/package', { params: { query: { limit: 100, page: 1 } } });
  if (error) throw new Error(error.errors.map((problem) => problem.message).join('; '));
  return data.data;
}

export async function storefrontCheckout(baseUrl: string, storeDomain: string, buyerToken: string): Promise<string> {
  const storefront = createStoreApiClient({ baseUrl, token: buyerToken });
  const header = { 'x-store-domain': storeDomain };
  const packages = await storefront.GET('/v1/webstore/package', { params: { query: { limit: 20 }, header } });
  const first = packages.data?.data[0];
  if (!first) throw new Error('the store sells nothing yet');
  const { data, error } = await storefront.POST('/v1/webstore/checkout', {
    params: { header },
    body: { cart: [{ package_id: first.id, quantity: 1 }], client_name: 'Steve', client_email: 'steve@example.com', client_identifier: 'Steve', gateway: 'PIX', terms: true },
  });
  if (error) throw new Error(error.errors[0]?.message ?? 'checkout refused');
  return data.order_id;
}
