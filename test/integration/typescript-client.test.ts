import { describe, expect, inject, it } from 'vitest';
import { createStoreApiClient } from '../../clients/typescript/index.ts';
import { newStore } from '../support/client.ts';

/** The typed client of clients/typescript against the local stack: what tsc checks is also what the API answers. */
describe('clients/typescript against the local stack', () => {
  it('creates and lists with an API token, reads the storefront by x-store-domain, and reads an error envelope', async () => {
    const store = await newStore();
    const baseUrl = `http://127.0.0.1:${inject('apiPort')}`;
    const operator = createStoreApiClient({ baseUrl, token: store.token });
    const created = await operator.POST('/v1/app/tag', { body: { name: 'Sale', color: '#ef4444' } });
    expect(created.data).toMatchObject({ name: 'Sale', color: '#ef4444', store_id: store.storeId });
    const listed = await operator.GET('/v1/app/tag', { params: { query: { limit: 100 } } });
    expect(listed.data?.data.map((tag) => tag.id)).toEqual([created.data!.id]);
    expect(listed.data?.meta.total).toBe(1);

    const shop = createStoreApiClient({ baseUrl });
    const packages = await shop.GET('/v1/webstore/package', { params: { query: { limit: 20 }, header: { 'x-store-domain': store.domain } } });
    expect(packages.response.status).toBe(200);
    expect(packages.data?.data).toEqual([]);

    const refused = await operator.GET('/v1/app/tag/{tagId}', { params: { path: { tagId: '999999' } } });
    expect(refused.response.status).toBe(404);
    expect(refused.error?.errors[0]?.code).toBe('NOT_FOUND');
  });
});
