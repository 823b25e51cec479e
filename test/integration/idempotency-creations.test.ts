import { describe, expect, it } from 'vitest';
import { type Store } from '../support/builders.ts';
import { dynamoDbCalls, firstError, newStore, type ApiResponse } from '../support/client.ts';

/**
 * A POST that creates something, whose write landed while its answer was lost (issue 28, Deliver
 * item 2): the creation's own transaction records what it created on the Idempotency-Key
 * (lib/db/idempotency.ts `createOnce`), so the careful client's retry (the same key and body,
 * faults off) answers that very thing, once, and never creates a second one. Faults are injected
 * by the local stack (`x-local-dynamodb-fault`, infra/local/dynamodb-faults.ts): `lose-answer` on
 * every attempt of the creation's TransactWriteItems (the SDK's retries included) lands the write
 * and loses every answer, so the first request is a 503.
 */
const freshKey = (label: string) => `${label}-${process.pid}-${Math.random().toString(36).slice(2)}`;
const LOSE_CREATION = 'lose-answer:TransactWriteItems:1-3';

type Send = (headers: Record<string, string>) => Promise<ApiResponse>;

/**
 * Sends a creation with a fresh key whose answer is lost, then the careful client's retry and a
 * replay; checks the 503, and that the retry and the replay answer the same created thing.
 */
async function loseThenRetry(send: Send, label: string) {
  const key = freshKey(label);
  const lost = await send({ 'idempotency-key': key, 'x-local-dynamodb-fault': LOSE_CREATION });
  expect(lost.status, lost.text).toBe(503);
  expect(firstError(lost).code).toBe('UNAVAILABLE');
  expect(Number(lost.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  const retried = await send({ 'idempotency-key': key });
  expect(retried.status, retried.text).not.toBe(409);
  const replayed = await send({ 'idempotency-key': key });
  expect(replayed.headers['idempotent-replayed']).toBe('true');
  expect(replayed.status).toBe(retried.status);
  expect(replayed.body).toEqual(retried.body);
  return { retried, key };
}

const ids = async (store: Store, path: string) => ((await store.get(path)).body.data as { id: number | string }[]).map((thing) => thing.id);

describe('a creation whose answer was lost is answered on the retry, and made once', () => {
  it('tag: the retry answers the tag created, and the store holds one', async () => {
    const store = await newStore();
    const body = { name: 'Sale', color: '#ef4444' };
    const { retried } = await loseThenRetry((headers) => store.post('/v1/app/tag', body, { headers }), 'tag');
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject(body);
    expect(retried.body).toEqual((await store.get(`/v1/app/tag/${retried.body.id}`)).body);
    expect(await ids(store, '/v1/app/tag')).toEqual([retried.body.id]);
    // The retry read the tag back (credential, claim, GetItem, keep); a fresh keyed creation makes
    // as many calls as before its transaction also recorded the key (credential, claim, id, TransactWrite, keep).
    expect(dynamoDbCalls(retried)).toBe(4);
    expect(dynamoDbCalls(await store.post('/v1/app/tag', body, { headers: { 'idempotency-key': freshKey('tag-calls') } }))).toBe(5);
  });
});
