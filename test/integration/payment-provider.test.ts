import { randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { buildEvent, lambdaContext, loadHandler } from '#infra/local/server.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { hashSecret, type ServerKeys } from '#lib/crypto.ts';
import { notifyKeyTarget, readProviderAccount } from '#lib/db/payment-provider.ts';
import { accountNotificationUrl, carryNotifyKey } from '#lib/flows/payment-provider-read.ts';
import { routes } from '#lib/routes/index.ts';
import { serverKeys } from '#lib/server-secret.ts';
import { takeFakeMercadoPago, type FakeMercadoPago } from '../support/fake-mercadopago.ts';
import { takeFakePayPal, type FakePayPal } from '../support/fake-paypal.ts';
import { takeFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/**
 * The store's payment provider accounts (extensions section 13): PUT|GET|DELETE
 * /v1/app/payment/provider/{provider}, through the local stack, whose MERCADOPAGO_API_URL,
 * STRIPE_API_URL and PAYPAL_API_URL are the fakes this file starts on the ports the run reserved.
 */
let fake: FakeMercadoPago;
let stripe: FakeStripe;
let paypal: FakePayPal;
beforeAll(async () => {
  fake = await takeFakeMercadoPago(inject('mercadopagoPort'));
  stripe = await takeFakeStripe(inject('stripePort'));
  paypal = await takeFakePayPal(inject('paypalPort'), inject('paypalPki'));
}, 330_000);
afterAll(() => Promise.all([fake.stop(), stripe.stop(), paypal.stop()]));
beforeEach(() => {
  fake.recover();
  stripe.recover();
  paypal.recover();
});

let accounts = 0;
/** A Mercado Pago account the fake knows, with secrets long enough to be masked to their last 4. */
function mercadoPagoAccount() {
  accounts += 1;
  const accessToken = `APP_USR-${process.pid}-${Date.now()}-${accounts}-tokenABCD`;
  const accountId = 880_000 + accounts;
  fake.addAccount(accessToken, accountId);
  return { access_token: accessToken, webhook_secret: `whsec-${Date.now()}-${accounts}-secretWXYZ`, gateways: ['PIX', 'MERCADOPAGO'], accountId };
}
const body = ({ accountId: _id, ...fields }: ReturnType<typeof mercadoPagoAccount>) => fields;

/** A Stripe account the fake knows; its secrets end in KEY9 and WHS9 (what the masked answer shows). */
function stripeAccount() {
  accounts += 1;
  const secretKey = `sk_test_${process.pid}x${Date.now()}x${accounts}KEY9`;
  const accountId = `acct_1Test${accounts}${Date.now()}`;
  stripe.addAccount(secretKey, accountId);
  return { secret_key: secretKey, webhook_secret: `whsec_${Date.now()}x${accounts}WHS9`, accountId };
}
const stripeBody = ({ accountId: _id, ...fields }: ReturnType<typeof stripeAccount>) => fields;

/** A PayPal REST app the fake knows, in the sandbox. */
function paypalApp() {
  accounts += 1;
  const clientId = `AClient${process.pid}x${Date.now()}x${accounts}CID9`;
  const clientSecret = `ESecret${Date.now()}x${accounts}SEC9`;
  const appId = `APP-${accounts}X${Date.now()}`;
  paypal.addApp(clientId, clientSecret, appId);
  return { client_id: clientId, client_secret: clientSecret, webhook_id: `8PT${Date.now()}${accounts}WID9`, environment: 'sandbox', appId };
}
const paypalBody = ({ appId: _id, ...fields }: ReturnType<typeof paypalApp>) => fields;
const usersMeCalls = (token: string) => fake.requests.filter((seen) => seen.path === '/users/me' && seen.headers.authorization === `Bearer ${token}`).length;

const apiUrl = () => inject('apiUrl').replace(/\/v1\/?$/, '');
const NOTIFY_URL = (provider: string) => new RegExp(`^${apiUrl().replace(/[.]/g, '\\.')}/v1/payment/notify/${provider}/[A-Za-z0-9_-]{43}$`);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every item of the store's partition, and the notify key's look-up item, as stored. */
async function storedItems(storeId: number): Promise<Record<string, unknown>[]> {
  const result = await db.send(
    new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `STORE#${storeId}` }, ConsistentRead: true }),
  );
  return result.Items ?? [];
}

describe('PUT /v1/app/payment/provider/mercadopago', () => {
  it('checks the credentials with one GET /users/me, stores them, and answers them masked with the notification_url', async () => {
    const store = await newStore();
    const account = mercadoPagoAccount();
    const res = await store.put('/v1/app/payment/provider/mercadopago', body(account));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      provider: 'mercadopago',
      enabled: true,
      gateways: ['PIX', 'MERCADOPAGO'],
      account_id: String(account.accountId),
      secrets: { access_token: '...ABCD', webhook_secret: '...WXYZ' },
      settings: { pix_expiration_minutes: 30 },
      notification_url: expect.stringMatching(NOTIFY_URL('mercadopago')),
      created_at: expect.stringMatching(ISO),
      updated_at: res.body.created_at,
    });
    expect(usersMeCalls(account.access_token)).toBe(1);
    expect((await store.get('/v1/app/payment/provider/mercadopago')).body).toEqual(res.body);
    expect((await store.get('/v1/app/payment/provider')).body).toEqual([res.body]);
    // The URL's key finds this store and provider by its hash alone.
    const key = res.body.notification_url.split('/').at(-1);
    expect(await notifyKeyTarget(hashSecret(key))).toEqual({ store_id: store.storeId, provider: 'mercadopago' });
  });

  it('a later PUT replaces the credentials and settings, and keeps the notification_url and created_at', async () => {
    const store = await newStore();
    const first = (await store.put('/v1/app/payment/provider/mercadopago', body(mercadoPagoAccount()))).body;
    const next = mercadoPagoAccount();
    const res = await store.put('/v1/app/payment/provider/mercadopago', { ...body(next), gateways: ['PIX'], pix_expiration_minutes: 60, enabled: false });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ enabled: false, gateways: ['PIX'], account_id: String(next.accountId), settings: { pix_expiration_minutes: 60 } });
    expect(res.body.notification_url).toBe(first.notification_url);
    expect(res.body.created_at).toBe(first.created_at);
  });

  it('credentials Mercado Pago refuses: 422 PROVIDER_CREDENTIALS on access_token, nothing stored', async () => {
    const store = await newStore();
    const res = await store.put('/v1/app/payment/provider/mercadopago', { ...body(mercadoPagoAccount()), access_token: 'APP_USR-not-a-token-1234' });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ code: 'PROVIDER_CREDENTIALS', field: 'access_token' });
    expect((await store.get('/v1/app/payment/provider/mercadopago')).status).toBe(404);
    expect(await storedItems(store.storeId)).toEqual((await storedItems(store.storeId)).filter((item) => !String(item.sk).startsWith('PAYMENT_PROVIDER#')));
  });

  it.each(['down', 'error'] as const)('Mercado Pago %s: 502 PROVIDER_UNAVAILABLE, nothing stored, and a retry succeeds', async (kind) => {
    const store = await newStore();
    const account = mercadoPagoAccount();
    fake.fail(kind);
    const res = await store.put('/v1/app/payment/provider/mercadopago', body(account));
    expect(res.status).toBe(502);
    expect(firstError(res).code).toBe('PROVIDER_UNAVAILABLE');
    expect((await store.get('/v1/app/payment/provider/mercadopago')).status).toBe(404);
    fake.recover();
    expect((await store.put('/v1/app/payment/provider/mercadopago', body(account))).status).toBe(200);
  });

  it.each([
    ['access_token missing', { access_token: undefined }, 'access_token'],
    ['webhook_secret missing', { webhook_secret: undefined }, 'webhook_secret'],
    ['gateways missing', { gateways: undefined }, 'gateways'],
    ['gateways empty', { gateways: [] }, 'gateways'],
    ['a gateway of another provider', { gateways: ['PIX', 'TEST'] }, 'gateways'],
    ['an unknown gateway', { gateways: ['BOLETO'] }, 'gateways.0'],
    ['pix_expiration_minutes below 30', { pix_expiration_minutes: 29 }, 'pix_expiration_minutes'],
    ['pix_expiration_minutes above 1440', { pix_expiration_minutes: 1441 }, 'pix_expiration_minutes'],
    ['pix_expiration_minutes not whole', { pix_expiration_minutes: 30.5 }, 'pix_expiration_minutes'],
    ['enabled not a boolean', { enabled: 'yes' }, 'enabled'],
    ['access_token with a space', { access_token: 'APP_USR 123' }, 'access_token'],
    ['access_token empty', { access_token: '' }, 'access_token'],
    ['access_token too long', { access_token: 'x'.repeat(513) }, 'access_token'],
    ['a Stripe field', { secret_key: 'sk_live_x' }, 'secret_key'],
    ['an unknown field', { api_key: 'x' }, 'api_key'],
  ])('%s: 422 naming the field, no provider call, nothing stored', async (_case, change, field) => {
    const store = await newStore();
    const account = mercadoPagoAccount();
    const res = await store.put('/v1/app/payment/provider/mercadopago', { ...body(account), ...change });
    expect(res.status, res.text).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect(usersMeCalls(account.access_token)).toBe(0);
    expect((await store.get('/v1/app/payment/provider')).body).toEqual([]);
  });

  it('a gateway named twice is kept once', async () => {
    const store = await newStore();
    const res = await store.put('/v1/app/payment/provider/mercadopago', { ...body(mercadoPagoAccount()), gateways: ['PIX', 'PIX'] });
    expect(res.body.gateways).toEqual(['PIX']);
  });

  it('a body that is not a JSON object: 400, nothing stored', async () => {
    const store = await newStore();
    expect((await store.put('/v1/app/payment/provider/mercadopago', undefined, { raw: '{"access_token": ', contentType: 'application/json' })).status).toBe(400);
    expect((await store.put('/v1/app/payment/provider/mercadopago', ['x'])).status).toBe(400);
    expect((await store.get('/v1/app/payment/provider')).body).toEqual([]);
  });
});

describe('PUT /v1/app/payment/provider/stripe', () => {
  it('checks the key with one GET /v1/account, binds its account, answers masked with the STRIPE gateway', async () => {
    const store = await newStore();
    const account = stripeAccount();
    const res = await store.put('/v1/app/payment/provider/stripe', stripeBody(account));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      provider: 'stripe',
      enabled: true,
      gateways: ['STRIPE'],
      account_id: account.accountId,
      secrets: { secret_key: '...KEY9', webhook_secret: '...WHS9' },
      settings: {},
      notification_url: expect.stringMatching(NOTIFY_URL('stripe')),
      created_at: expect.stringMatching(ISO),
      updated_at: res.body.created_at,
    });
    expect(stripe.requests.filter((seen) => seen.path === '/v1/account' && seen.headers.authorization === `Bearer ${account.secret_key}`)).toHaveLength(1);
    // Sealed: no secret in clear in any item of the store.
    const items = JSON.stringify(await storedItems(store.storeId));
    for (const secret of [account.secret_key, account.webhook_secret]) expect(items).not.toContain(secret);
    expect((await store.get('/v1/app/payment/provider/stripe')).body).toEqual(res.body);
    expect((await call('GET', '/v1/webstore/gateway', { headers: { 'x-store-domain': store.domain } })).body).toEqual([
      { gateway: 'STRIPE', display: 'Stripe', name: 'stripe', fee: 0, is_percentage_fee: false },
    ]);
    const disabled = await store.put('/v1/app/payment/provider/stripe', { ...stripeBody(account), enabled: false });
    expect(disabled.body).toMatchObject({ enabled: false, notification_url: res.body.notification_url });
    expect((await call('GET', '/v1/webstore/gateway', { headers: { 'x-store-domain': store.domain } })).body).toEqual([]);
  });

  it('a key Stripe refuses: 422 PROVIDER_CREDENTIALS on secret_key; Stripe down: 502; nothing stored either way', async () => {
    const store = await newStore();
    const refused = await store.put('/v1/app/payment/provider/stripe', { ...stripeBody(stripeAccount()), secret_key: 'sk_test_unknown_to_stripe' });
    expect(refused.status).toBe(422);
    expect(firstError(refused)).toMatchObject({ field: 'secret_key', code: 'PROVIDER_CREDENTIALS' });
    stripe.fail('down');
    const down = await store.put('/v1/app/payment/provider/stripe', stripeBody(stripeAccount()));
    expect(down.status).toBe(502);
    expect(firstError(down)).toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect((await store.get('/v1/app/payment/provider')).body).toEqual([]);
  });

  it.each([
    ['secret_key missing', { secret_key: undefined }, 'secret_key'],
    ['webhook_secret missing', { webhook_secret: undefined }, 'webhook_secret'],
    ['a publishable key', { secret_key: 'pk_test_abcdefghijklmnop' }, 'secret_key'],
    ['a webhook secret that is not whsec_', { webhook_secret: 'secret-abcdefghijkl' }, 'webhook_secret'],
    ['a key with a space', { secret_key: 'sk_test_abc def' }, 'secret_key'],
    ['gateways (Stripe has one)', { gateways: ['STRIPE'] }, 'gateways'],
    ['a Mercado Pago field', { access_token: 'APP_USR-1234567890' }, 'access_token'],
    ['a PayPal field', { environment: 'live' }, 'environment'],
    ['enabled not a boolean', { enabled: 1 }, 'enabled'],
  ])('%s: 422 naming the field, no call to Stripe, nothing stored', async (_case, change, field) => {
    const store = await newStore();
    const before = stripe.requests.length;
    const res = await store.put('/v1/app/payment/provider/stripe', { ...stripeBody(stripeAccount()), ...change });
    expect(res.status, res.text).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect(stripe.requests.length).toBe(before);
    expect((await store.get('/v1/app/payment/provider')).body).toEqual([]);
  });
});

describe('PUT /v1/app/payment/provider/paypal', () => {
  it('checks the credentials with one OAuth token, binds the REST app, keeps the environment; the PAYPAL gateway', async () => {
    const store = await newStore();
    const app = paypalApp();
    const res = await store.put('/v1/app/payment/provider/paypal', paypalBody(app));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      provider: 'paypal',
      enabled: true,
      gateways: ['PAYPAL'],
      account_id: app.appId,
      secrets: { client_id: '...CID9', client_secret: '...SEC9', webhook_id: '...WID9' },
      settings: { environment: 'sandbox' },
      notification_url: expect.stringMatching(NOTIFY_URL('paypal')),
      created_at: expect.stringMatching(ISO),
      updated_at: res.body.created_at,
    });
    const basic = `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;
    expect(paypal.requests.filter((seen) => seen.path === '/v1/oauth2/token' && seen.headers.authorization === basic)).toHaveLength(1);
    const items = JSON.stringify(await storedItems(store.storeId));
    for (const secret of [app.client_id, app.client_secret, app.webhook_id]) expect(items).not.toContain(secret);
    expect((await call('GET', '/v1/webstore/gateway', { headers: { 'x-store-domain': store.domain } })).body).toEqual([
      { gateway: 'PAYPAL', display: 'PayPal', name: 'paypal', fee: 0, is_percentage_fee: false },
    ]);
    const live = await store.put('/v1/app/payment/provider/paypal', { ...paypalBody(app), environment: 'live' });
    expect(live.body.settings).toEqual({ environment: 'live' });
    expect((await store.get('/v1/app/payment/provider/paypal')).body).toEqual(live.body);
  });

  it('credentials PayPal refuses: 422 PROVIDER_CREDENTIALS; PayPal down: 502; nothing stored either way', async () => {
    const store = await newStore();
    const refused = await store.put('/v1/app/payment/provider/paypal', { ...paypalBody(paypalApp()), client_secret: 'EWrongSecret1234' });
    expect(refused.status).toBe(422);
    expect(firstError(refused)).toMatchObject({ field: 'client_secret', code: 'PROVIDER_CREDENTIALS' });
    paypal.fail('down');
    const down = await store.put('/v1/app/payment/provider/paypal', paypalBody(paypalApp()));
    expect(down.status).toBe(502);
    expect((await store.get('/v1/app/payment/provider')).body).toEqual([]);
  });

  it.each([
    ['client_id missing', { client_id: undefined }, 'client_id'],
    ['client_secret missing', { client_secret: undefined }, 'client_secret'],
    ['webhook_id missing', { webhook_id: undefined }, 'webhook_id'],
    ['environment missing', { environment: undefined }, 'environment'],
    ['an unknown environment', { environment: 'production' }, 'environment'],
    ['a Stripe field', { secret_key: 'sk_test_abcdefghijklmnop' }, 'secret_key'],
    ['a webhook_secret (Stripe and Mercado Pago only)', { webhook_secret: 'whsec_abcdefghijkl' }, 'webhook_secret'],
    ['client_secret too long', { client_secret: 'x'.repeat(513) }, 'client_secret'],
  ])('%s: 422 naming the field, no call to PayPal, nothing stored', async (_case, change, field) => {
    const store = await newStore();
    const before = paypal.requests.length;
    const res = await store.put('/v1/app/payment/provider/paypal', { ...paypalBody(paypalApp()), ...change });
    expect(res.status, res.text).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect(paypal.requests.length).toBe(before);
    expect((await store.get('/v1/app/payment/provider')).body).toEqual([]);
  });

  it('the three providers side by side in GET /webstore/gateway', async () => {
    const store = await newStore();
    await store.put('/v1/app/payment/provider/paypal', paypalBody(paypalApp()));
    await store.put('/v1/app/payment/provider/stripe', stripeBody(stripeAccount()));
    await store.put('/v1/app/payment/provider/mercadopago', body(mercadoPagoAccount()));
    const listed = await call('GET', '/v1/webstore/gateway', { headers: { 'x-store-domain': store.domain } });
    expect(listed.body.map((entry: { gateway: string }) => entry.gateway)).toEqual(['PIX', 'MERCADOPAGO', 'STRIPE', 'PAYPAL']);
  });
});

describe('unknown providers', () => {
  it('an unknown provider is refused in the envelope on every method', async () => {
    const store = await newStore();
    for (const res of [
      await store.put('/v1/app/payment/provider/bitcoin', {}),
      await store.get('/v1/app/payment/provider/bitcoin'),
      await store.delete('/v1/app/payment/provider/bitcoin'),
    ]) {
      expect([404, 422]).toContain(res.status);
      expect(firstError(res).message).toBeTruthy();
    }
  });
});

describe('PUT /v1/app/payment/provider/test', () => {
  it('makes a signing secret and a TEST account on the first PUT and keeps both after', async () => {
    const store = await newStore();
    const first = await store.put('/v1/app/payment/provider/test', {});
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      provider: 'test',
      enabled: true,
      gateways: ['TEST'],
      account_id: expect.stringMatching(/^test_[0-9a-f]{16}$/),
      secrets: { signing_secret: expect.stringMatching(/^\.\.\..{4}$/) },
      settings: {},
      notification_url: expect.stringMatching(NOTIFY_URL('test')),
    });
    const again = await store.put('/v1/app/payment/provider/test', { enabled: false });
    expect(again.body).toMatchObject({ enabled: false, account_id: first.body.account_id, secrets: first.body.secrets, notification_url: first.body.notification_url });
  });

  it('takes only `enabled`: a Mercado Pago field is 422 naming it, nothing stored', async () => {
    const store = await newStore();
    const res = await store.put('/v1/app/payment/provider/test', { enabled: true, access_token: 'APP_USR-1234567890' });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'access_token', code: 'VALIDATION_FAILED' });
    expect((await store.get('/v1/app/payment/provider/test')).status).toBe(404);
  });
});

describe('DELETE /v1/app/payment/provider/{provider}', () => {
  it('204, then 404 to GET and DELETE and gone from the list; a new PUT revives the same notification_url', async () => {
    const store = await newStore();
    const made = (await store.put('/v1/app/payment/provider/test', {})).body;
    await store.put('/v1/app/payment/provider/mercadopago', body(mercadoPagoAccount()));
    expect((await store.delete('/v1/app/payment/provider/test')).status).toBe(204);
    expect((await store.get('/v1/app/payment/provider/test')).status).toBe(404);
    expect((await store.delete('/v1/app/payment/provider/test')).status).toBe(404);
    expect((await store.get('/v1/app/payment/provider')).body.map((entry: { provider: string }) => entry.provider)).toEqual(['mercadopago']);
    const revived = await store.put('/v1/app/payment/provider/test', {});
    expect(revived.body.notification_url).toBe(made.notification_url);
    expect(revived.body.created_at).not.toBe(made.created_at);
  });
});

describe('tenancy', () => {
  it("another store's account is 404 to GET and DELETE, and absent from the list; its own PUT makes its own account", async () => {
    const owner = await newStore();
    const other = await newStore();
    const made = (await owner.put('/v1/app/payment/provider/mercadopago', body(mercadoPagoAccount()))).body;
    expect((await other.get('/v1/app/payment/provider/mercadopago')).status).toBe(404);
    expect((await other.delete('/v1/app/payment/provider/mercadopago')).status).toBe(404);
    expect((await other.get('/v1/app/payment/provider')).body).toEqual([]);
    const own = (await other.put('/v1/app/payment/provider/mercadopago', body(mercadoPagoAccount()))).body;
    expect(own.notification_url).not.toBe(made.notification_url);
    expect((await owner.get('/v1/app/payment/provider/mercadopago')).body).toEqual(made);
  });
});

describe('secrets never in clear', () => {
  it('not in any answer, any item of the store or the notify key, nor any line the handler logs (also when refused)', async () => {
    const store = await newStore();
    const account = mercadoPagoAccount();
    const refused = { ...body(account), access_token: `APP_USR-refused-${Date.now()}-QQQQ` };
    const secrets = [account.access_token, account.webhook_secret, refused.access_token];

    const logged: string[] = [];
    const writeOut = process.stdout.write.bind(process.stdout);
    const writeErr = process.stderr.write.bind(process.stderr);
    const originals = { log: console.log, error: console.error, warn: console.warn, info: console.info };
    const keep = (...args: unknown[]) => void logged.push(args.map(String).join(' '));
    process.stdout.write = ((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0) as typeof process.stderr.write;
    Object.assign(console, { log: keep, error: keep, warn: keep, info: keep });
    const answers: string[] = [];
    try {
      const handler = await loadHandler('payment-provider-put');
      // Refused, then Mercado Pago down (a 502, whose error the handler logs with its stack), then stored.
      for (const [json, expected, outage] of [
        [refused, 422, false],
        [body(account), 502, true],
        [body(account), 200, false],
      ] as const) {
        if (outage) fake.fail('down');
        else fake.recover();
        const event = buildEvent(
          {
            method: 'PUT',
            url: new URL('http://127.0.0.1/v1/app/payment/provider/mercadopago'),
            headers: { authorization: `Bearer ${store.token}`, 'content-type': 'application/json', host: '127.0.0.1' },
            body: Buffer.from(JSON.stringify(json)),
            sourceIp: '127.0.0.1',
          },
          routes['payment-provider-put'],
          { provider: 'mercadopago' },
        );
        const result = await handler(event, lambdaContext('payment-provider-put', `secrets-${expected}`));
        expect(result.statusCode, result.body).toBe(expected);
        answers.push(result.body ?? '');
      }
    } finally {
      process.stdout.write = writeOut;
      process.stderr.write = writeErr;
      Object.assign(console, originals);
    }
    answers.push((await store.get('/v1/app/payment/provider')).text, (await store.get('/v1/app/payment/provider/mercadopago')).text);
    const items = JSON.stringify(await storedItems(store.storeId));
    const key = JSON.parse(answers[2]!).notification_url.split('/').at(-1);
    // The key itself is never stored either: only its hash.
    for (const text of [...answers, items, ...logged]) for (const secret of secrets) expect(text).not.toContain(secret);
    expect(items).not.toContain(key);
    expect(items).toContain(hashSecret(key));
    // The 502's error line was written (and was searched).
    expect(logged.filter((line) => line.includes('"level":"error"') && line.includes('PUT /v1/app/payment/provider/{provider}'))).toHaveLength(1);
  });
});

describe('GET /v1/webstore/gateway', () => {
  const gateways = (domain: string) => call('GET', '/v1/webstore/gateway', { headers: { 'x-store-domain': domain } });

  it("lists the enabled accounts' gateways in the clients' shape, without a disabled or removed account's", async () => {
    const store = await newStore();
    expect((await gateways(store.domain)).body).toEqual([]);
    await store.put('/v1/app/payment/provider/mercadopago', body(mercadoPagoAccount()));
    await store.put('/v1/app/payment/provider/test', {});
    const listed = await gateways(store.domain);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      { gateway: 'PIX', display: 'PIX', name: 'pix', fee: 0, is_percentage_fee: false },
      { gateway: 'MERCADOPAGO', display: 'Mercado Pago', name: 'mercadopago', fee: 0, is_percentage_fee: false },
      { gateway: 'TEST', display: 'Test payment', name: 'test', fee: 0, is_percentage_fee: false },
    ]);
    await store.put('/v1/app/payment/provider/mercadopago', { ...body(mercadoPagoAccount()), gateways: ['PIX'], enabled: false });
    await store.delete('/v1/app/payment/provider/test');
    expect((await gateways(store.domain)).body).toEqual([]);
    await store.put('/v1/app/payment/provider/mercadopago', { ...body(mercadoPagoAccount()), gateways: ['PIX'] });
    expect((await gateways(store.domain)).body.map((entry: { gateway: string }) => entry.gateway)).toEqual(['PIX']);
  });

  it('shows each store its own gateways only; an unknown domain is 404 and no domain 400, in the envelope', async () => {
    const owner = await newStore();
    const other = await newStore();
    await owner.put('/v1/app/payment/provider/test', {});
    expect((await gateways(other.domain)).body).toEqual([]);
    const unknown = await gateways(`nope-${Date.now()}.test.localhost`);
    expect(unknown.status).toBe(404);
    expect(firstError(unknown).message).toBeTruthy();
    const none = await call('GET', '/v1/webstore/gateway');
    expect(none.status).toBeGreaterThanOrEqual(400);
    expect(none.status).toBeLessThan(500);
    expect(firstError(none).message).toBeTruthy();
  });

  it('reads the domain and one Query', async () => {
    const store = await newStore();
    expect(dynamoDbCalls(await gateways(store.domain))).toBe(2);
  });
});

describe('the notify key across rotations of the server secret', () => {
  it('is carried by a write during a rotation (sealed under the new key): after two rotations the account still shows the same URL; a key never carried is lost after two', async () => {
    const store = await newStore();
    const put = await store.put('/v1/app/payment/provider/test', { enabled: true });
    expect(put.status, put.text).toBe(200);
    const key = String(put.body.notification_url).split('/').pop()!;
    const stack = await serverKeys();
    const [k1, k2] = ['first-rotation-key', 'second-rotation-key'].map((name) => `${name}-${randomBytes(16).toString('hex')}`) as [string, string];
    const read = async () => (await readProviderAccount(store.storeId, 'test'))!;
    const keyUnder = async (keys: ServerKeys) =>
      accountNotificationUrl(await read(), keys, 'https://api.example')
        ?.split('/')
        .pop() ?? null;

    // Rotation 1 under way (`previous` the old key): still derived. Rotation 2 with no carry: gone.
    expect(await keyUnder({ current: k1, previous: stack.current })).toBe(key);
    expect(await keyUnder({ current: k2, previous: k1 })).toBeNull();
    // The current key gives it already: nothing to carry, nothing written.
    expect(await carryNotifyKey(await read(), stack)).toBe(false);

    // A write during rotation 1 (a checkout's charge) carries it, once.
    expect(await carryNotifyKey(await read(), { current: k1, previous: stack.current })).toBe(true);
    expect(await carryNotifyKey(await read(), { current: k1, previous: stack.current })).toBe(false);
    expect(await keyUnder({ current: k1 })).toBe(key);
    // Rotation 2: found under `previous` (its seal), carried again; after it the URL is the same one.
    expect(await keyUnder({ current: k2, previous: k1 })).toBe(key);
    expect(await carryNotifyKey(await read(), { current: k2, previous: k1 })).toBe(true);
    expect(await keyUnder({ current: k2 })).toBe(key);
    // The table holds it sealed, never in clear, and the look-up by its hash still names the account.
    expect(JSON.stringify(await read())).not.toContain(key);
    expect(await notifyKeyTarget(hashSecret(key))).toEqual({ store_id: store.storeId, provider: 'test' });
  });
});

describe('DynamoDB calls', () => {
  it('PUT: credential, account read, one transaction (first) or one Put (later); GET, list and DELETE: credential + one call', async () => {
    const store = await newStore();
    expect(dynamoDbCalls(await store.put('/v1/app/payment/provider/test', {}))).toBe(3);
    expect(dynamoDbCalls(await store.put('/v1/app/payment/provider/test', { enabled: false }))).toBe(3);
    expect(dynamoDbCalls(await store.get('/v1/app/payment/provider/test'))).toBe(2);
    expect(dynamoDbCalls(await store.get('/v1/app/payment/provider'))).toBe(2);
    expect(dynamoDbCalls(await store.delete('/v1/app/payment/provider/test'))).toBe(2);
    // Refused before any table call but the credential's.
    expect(dynamoDbCalls(await store.put('/v1/app/payment/provider/test', { enabled: 'yes' }))).toBe(1);
  });
});
