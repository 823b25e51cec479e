import { describe, expect, it } from 'vitest';
import { findCredential, LAST_USE_RESOLUTION_MS, listOperatorCredentials, noteCredentialUse, revokeCredential } from '#lib/db/credential.ts';
import { atTime, call, dynamoDbCalls, newStore } from '../support/client.ts';
import { claim } from '../support/delivery.ts';

/**
 * "Last used" of API tokens and keys (admin `token list`, `key list`): written beside the request
 * at most once per credential per hour, by a conditional UpdateItem the route may make whatever
 * its access (a read route here, under the local stack's table-access enforcement), never failing
 * the request. The time is set per request (x-local-now), so the hour passes without a sleep.
 */
const T0 = '2030-03-01T10:00:00.000Z';
const MINUTE = 60_000;
const later = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

const lastUseOf = async (storeId: number, kind: 'api_token' | 'api_key', id?: number) => {
  const listed = await listOperatorCredentials(storeId, kind);
  return (id === undefined ? listed[0] : listed.find((entry) => entry.id === id))?.last_used_at;
};

describe('the last use of an API token or key', () => {
  it('is null until the first use, then moves at most once an hour, one UpdateItem beside a read route', async () => {
    const store = await newStore('Last use', { unusedCredentials: true });
    expect(await lastUseOf(store.storeId, 'api_token')).toBeNull();

    const first = await store.get('/v1/app/tag', { headers: atTime(T0) });
    expect(first.status, first.text).toBe(200);
    expect(await lastUseOf(store.storeId, 'api_token')).toBe(T0);

    // Within the hour: the lookup already read the mark, so nothing is written (one call fewer).
    const within = await store.get('/v1/app/tag', { headers: atTime(T0, 59 * MINUTE) });
    expect(within.status).toBe(200);
    expect(dynamoDbCalls(within)).toBe(dynamoDbCalls(first) - 1);
    expect(await lastUseOf(store.storeId, 'api_token')).toBe(T0);

    const afterAnHour = await store.get('/v1/app/tag', { headers: atTime(T0, 61 * MINUTE) });
    expect(dynamoDbCalls(afterAnHour)).toBe(dynamoDbCalls(first));
    expect(await lastUseOf(store.storeId, 'api_token')).toBe(later(61 * MINUTE));
  });

  it('is moved once by requests racing past the hour, each of them answered', async () => {
    const store = await newStore('Last use', { unusedCredentials: true });
    await store.get('/v1/app/tag', { headers: atTime(T0) });
    const racing = await Promise.all(Array.from({ length: 8 }, () => store.get('/v1/app/tag', { headers: atTime(T0, 3 * 60 * MINUTE) })));
    expect(racing.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(await lastUseOf(store.storeId, 'api_token')).toBe(later(3 * 60 * MINUTE));
  });

  it("marks a game server's delivery key and an identify key when accepted, not an API key refused on an operator route", async () => {
    const store = await newStore('Last use', { unusedCredentials: true });
    const serverMade = await store.post('/v1/app/server', { name: 'Survival' });
    const server = { id: serverMade.body.id as number, key: (await store.post(`/v1/app/server/${serverMade.body.id}/key`)).body.key as string };
    const keys = await listOperatorCredentials(store.storeId, 'api_key');
    const deliveryKeyId = keys.find((entry) => entry.server_id === server.id)!.id;
    const identifyKeyId = keys.find((entry) => entry.server_id === null)!.id;

    expect((await call('GET', '/v1/app/tag', { token: store.identifyKey, headers: atTime(T0) })).status).toBe(403);
    expect(await lastUseOf(store.storeId, 'api_key', identifyKeyId)).toBeNull();

    expect((await call('POST', '/v1/delivery/claim', { token: server.key, json: {}, headers: atTime(T0, MINUTE) })).status).toBe(200);
    expect(await lastUseOf(store.storeId, 'api_key', deliveryKeyId)).toBe(later(MINUTE));
    // A request the handler refuses (an unknown handoff) still used the key.
    const refused = await call('POST', '/v1/app/customer/identify', { token: store.identifyKey, json: { handoff: 'sho_unknown' }, headers: atTime(T0, 2 * MINUTE) });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(await lastUseOf(store.storeId, 'api_key', identifyKeyId)).toBe(later(2 * MINUTE));
    expect((await claim(server.key)).status).toBe(200);
  });

  it('writes nothing for a credential revoked between its lookup and its mark', async () => {
    const store = await newStore('Last use', { unusedCredentials: true });
    expect(await revokeCredential(store.token, 'api_token', store.storeId)).toBe(true);
    expect(await noteCredentialUse(store.token, Date.parse(T0) + LAST_USE_RESOLUTION_MS)).toBe(false);
    expect(await findCredential(store.token)).toBeUndefined();
  });
});
