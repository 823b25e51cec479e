import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { enforceRouteAccess, routeAccess } from '#infra/local/route-access.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { call, dynamoDbCalls, newStore } from '../support/client.ts';
import { connectTest, payOrder, pendingOrder, sendTestNotification, testButton } from '../support/payment-orders.ts';

/**
 * The DynamoDB calls each request makes, measured by the local stack (header
 * x-local-dynamodb-calls). These are the minimum the data model allows; a change that adds a
 * call fails here and has to say why.
 */
const calls = dynamoDbCalls;

describe('DynamoDB calls per request', () => {
  it('foundation endpoints', async () => {
    const store = await newStore();
    const created = await store.post('/v1/app/tag', { name: 'x', color: '#fff' });
    // credential GetItem + id sequence ADD + conditional Put
    expect(calls(created)).toBe(3);
    expect(calls(await store.get(`/v1/app/tag/${created.body.id}`))).toBe(2);
    // the list's counter (GetItem) and its page (Query with Limit), in parallel; the create and delete move the counter in their own write
    expect(calls(await store.get('/v1/app/tag'))).toBe(3);
    expect(calls(await store.patch(`/v1/app/tag/${created.body.id}`, { name: 'y' }))).toBe(2);
    // the flag moves the apply-all tag ids in the same TransactWrite, then the tag is read back (a transaction answers nothing)
    expect(calls(await store.patch(`/v1/app/tag/${created.body.id}`, { apply_to_all_packages: true }))).toBe(3);
    // a package read: one BatchGet of the package and the apply-all ids, then the BatchGet of the tag shown
    const pkg = await store.post('/v1/app/package', { name: 'P', price: 1 });
    expect(calls(await store.get(`/v1/app/package/${pkg.body.id}`))).toBe(3);
    expect(calls(await store.delete(`/v1/app/tag/${created.body.id}`))).toBe(2);
    expect(calls(await store.get('/v1/app/store'))).toBe(2);
    expect(calls(await store.patch('/v1/app/store', { name: 'n' }))).toBe(2);
    // a domain change reads the current domain, then moves the sentinel in one transaction
    expect(calls(await store.patch('/v1/app/store', { domain: `calls-${store.storeId}.test.localhost` }))).toBe(3);
  });

  it('rejected requests stop early', async () => {
    const store = await newStore();
    // invalid body: only the credential was read
    expect(calls(await store.post('/v1/app/tag', { name: '' }))).toBe(1);
    expect(calls(await store.as('sat_nope').get('/v1/app/tag'))).toBe(1);
    // a query parameter the route does not take: only the credential was read
    expect(calls(await store.get('/v1/app/order?email_address=a@example.com'))).toBe(1);
    expect(calls(await store.get('/v1/app/order?status=PENDING&status=APPROVED'))).toBe(1);
  });
});

describe('DynamoDB calls of paying (section 13), with the TEST gateway', () => {
  it('gateway list, checkout with a gateway, a payment of an order (new, then the live one answered), the TEST page', async () => {
    const store = await newStore();
    expect((await store.put('/v1/app/payment/provider/test', {})).status).toBe(200);
    const pkg = await store.post('/v1/app/package', { name: 'P', price: 5 });
    const headers = { 'x-store-domain': store.domain };
    const buyer = { client_name: 'Steve', client_email: 'steve@example.com', client_identifier: 'Steve' };
    // the store domain + one Query of the provider accounts
    expect(calls(await call('GET', '/v1/webstore/gateway', { headers }))).toBe(2);
    const checkout = await call('POST', '/v1/webstore/checkout', { headers, json: { cart: [{ package_id: pkg.body.id, quantity: 1 }], ...buyer, gateway: 'TEST' } });
    // the store domain + (store, provider accounts) + placing the order (3: the cart's BatchGet, order id ADD,
    // TransactWrite) + the order's payments + TransactWrite CREATED + the TEST provider's TransactWrite (charge + ref)
    // + TransactWrite PENDING and the provider ref
    expect(calls(checkout)).toBe(10);
    const order = await call('POST', '/v1/webstore/checkout', { headers, json: { cart: [{ package_id: pkg.body.id, quantity: 1 }], ...buyer } });
    const pay = () => call('POST', `/v1/webstore/order/${order.body.internal_id}/payment`, { headers, json: { gateway: 'TEST' } });
    // the store domain + internal id + order + (store, accounts) + the order's payments + CREATED + the TEST charge + PENDING
    expect(calls(await pay())).toBe(9);
    // the live payment answered: no write
    expect(calls(await pay())).toBe(6);
    // the TEST page: the ref's owner and the charge
    expect(calls(await call('GET', new URL(checkout.body.checkout_url).pathname))).toBe(2);
  });
});

describe("the route's table access, enforced on the local stack as IAM does on AWS", () => {
  const key = { pk: `IAM-PROBE#${process.pid}`, sk: '#PROBE' };
  const asRoute = <T>(access: 'none' | 'read' | 'write', send: () => Promise<T>) => routeAccess.run({ access }, send);

  it('lets a read route read and refuses its writes; lets a write route do both; refuses every call of a route without table access', async () => {
    enforceRouteAccess(db);
    const put = () => db.send(new PutCommand({ TableName: TABLE, Item: { ...key, value: 1 } }));
    const get = () => db.send(new GetCommand({ TableName: TABLE, Key: key }));
    const transact = () => db.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: TABLE, Item: { ...key, value: 2 } } }] }));
    await expect(asRoute('read', put)).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(asRoute('read', transact)).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect((await asRoute('read', get)).Item).toBeUndefined();
    await asRoute('write', put);
    expect((await asRoute('read', get)).Item).toMatchObject({ value: 1 });
    await expect(asRoute('none', get)).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });

  it("checks a transaction item by item: a list route's first count may update and check counters, nothing beside them", async () => {
    enforceRouteAccess(db);
    const counter = { pk: `COUNT#probe-${process.pid}`, sk: 'ORDER' };
    const shard = { pk: counter.pk, sk: 'ORDER#SHARD#3' };
    const asList = <T>(send: () => Promise<T>) => routeAccess.run({ access: 'read', listCountWrites: true }, send);
    const firstCount = (also: Record<string, unknown>[] = []) =>
      db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { TableName: TABLE, Key: counter, UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': 4 } } },
            { ConditionCheck: { TableName: TABLE, Key: shard, ConditionExpression: 'attribute_not_exists(moves)' } },
            ...also,
          ],
        }),
      );
    await asList(() => firstCount());
    expect((await asRoute('read', () => db.send(new GetCommand({ TableName: TABLE, Key: counter })))).Item).toMatchObject({ n: 4 });
    // A check outside the counters' partitions, or a Put on them: refused, nothing written.
    await expect(asList(() => firstCount([{ ConditionCheck: { TableName: TABLE, Key: key, ConditionExpression: 'attribute_not_exists(pk)' } }]))).rejects.toMatchObject({
      name: 'AccessDeniedException',
    });
    await expect(asList(() => firstCount([{ Put: { TableName: TABLE, Item: { pk: counter.pk, sk: 'OTHER' } } }]))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });
});

describe('DynamoDB calls of a payment notification (extensions section 13)', () => {
  it('the notify route: key, account, the payment by its ref, the TEST ledger (the provider), order and store, then one approval', async () => {
    const store = await newStore();
    const test = await connectTest(store);
    const order = await pendingOrder(store);
    const payment = await payOrder(store, test, order, 'TEST');
    const approving = await testButton(test, payment, 'pay');
    expect(approving.status).toBe(200);
    // notify key GetItem + account GetItem + ref sentinel GetItem + payment GetItem + the TEST ledger's GetItem (the fetch)
    // + order and store GetItems + command ids ADD + the approval's TransactWrite (order, command, chain, counts, payment)
    expect(calls(approving)).toBe(9);
    // The same again: read and fetched, nothing to write.
    expect(calls(await sendTestNotification(test, payment.provider_ref!))).toBe(7);
    // An unknown key: its look-up alone, before any decryption.
    expect(calls(await call('POST', `/v1/payment/notify/test/${'B'.repeat(43)}`, { json: {} }))).toBe(1);
    // A wrong signature: the key and the account (its secret), nothing fetched.
    expect(calls(await sendTestNotification(test, payment.provider_ref!, test.notifyUrl, 'not-the-secret'))).toBe(2);
  });
});
