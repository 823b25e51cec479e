import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProviderError } from '#lib/payments/adapter.ts';
import { callProvider, PROVIDER_RETRIES, PROVIDER_TIMEOUT_MS } from '#lib/payments/http.ts';
import { mercadoPagoAdapter } from '#lib/payments/mercadopago.ts';
import { paypalAdapter } from '#lib/payments/paypal.ts';
import { stripeAdapter } from '#lib/payments/stripe.ts';

/**
 * The bounds section 13 puts on every provider call, pinned without waiting for them: 5 s per
 * attempt (the signal handed to fetch), at most one retry, and a retry only where repeating is
 * safe (a GET, or a write carrying its idempotency key) after what may be transient. The same
 * paths run over real HTTP against the fake Mercado Pago in test/integration/payments-mercadopago.test.ts.
 */
const answer = (status: number, body: unknown = {}) => new Response(JSON.stringify(body), { status });

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function stubFetch(...outcomes: (Response | Error)[]) {
  const fetch = vi.fn(async () => {
    const next = outcomes.shift();
    if (!next) throw new Error('no more stubbed answers');
    if (next instanceof Error) throw next;
    return next;
  });
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

describe('a provider call', () => {
  it('gives each attempt 5 seconds and retries at most once', async () => {
    expect([PROVIDER_TIMEOUT_MS, PROVIDER_RETRIES]).toEqual([5_000, 1]);
    const timeout = vi.spyOn(AbortSignal, 'timeout');
    const fetch = stubFetch(answer(503), answer(502), answer(200));
    const error = await callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: {} }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ failure: 'unavailable', status: 502 });
    expect(fetch).toHaveBeenCalledTimes(2);
    expect(timeout.mock.calls).toEqual([[5_000], [5_000]]);
  });

  it('retries a keyed write with the same key, and answers the retry', async () => {
    const fetch = stubFetch(new TypeError('fetch failed'), answer(201, { id: 1 }));
    const response = await callProvider('mercadopago', { method: 'POST', url: 'https://provider.test/x', headers: {}, body: {}, idempotencyKey: 'create:pay_1' });
    expect(response).toEqual({ status: 201, body: { id: 1 } });
    const keys = fetch.mock.calls.map((call) => ((call as unknown[])[1] as RequestInit).headers as Record<string, string>).map((headers) => headers['x-idempotency-key']);
    expect(keys).toEqual(['create:pay_1', 'create:pay_1']);
  });

  it('never repeats a write without a key, nor a refusal (4xx), and reads 429 as transient', async () => {
    let fetch = stubFetch(answer(500));
    await expect(callProvider('mercadopago', { method: 'POST', url: 'https://provider.test/x', headers: {}, body: {} })).rejects.toMatchObject({ failure: 'unavailable' });
    expect(fetch).toHaveBeenCalledTimes(1);
    fetch = stubFetch(answer(400, { message: 'bad' }));
    await expect(callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: {} })).resolves.toEqual({ status: 400, body: { message: 'bad' } });
    expect(fetch).toHaveBeenCalledTimes(1);
    fetch = stubFetch(answer(429), answer(200, { ok: true }));
    await expect(callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: {} })).resolves.toEqual({ status: 200, body: { ok: true } });
  });

  it('names a timeout as one, and no credential in its message', async () => {
    stubFetch(Object.assign(new Error('aborted'), { name: 'TimeoutError' }), Object.assign(new Error('aborted'), { name: 'TimeoutError' }));
    await expect(callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: { authorization: 'Bearer APP_USR-secret' } })).rejects.toThrow(
      /^mercadopago: no answer within 5000 ms$/,
    );
  });
});

describe('form bodies and the key header of each provider', () => {
  it('form-encodes a URLSearchParams body and sends the key in the header named (Stripe Idempotency-Key, PayPal PayPal-Request-Id)', async () => {
    const fetch = stubFetch(answer(200), answer(200));
    await callProvider('stripe', {
      method: 'POST',
      url: 'https://provider.test/x',
      headers: {},
      body: new URLSearchParams({ 'a[b]': '1' }),
      idempotencyKey: 'refund:pay_1',
      idempotencyHeader: 'idempotency-key',
    });
    await callProvider('paypal', {
      method: 'POST',
      url: 'https://provider.test/y',
      headers: {},
      body: {},
      idempotencyKey: 'capture:pay_1',
      idempotencyHeader: 'paypal-request-id',
    });
    const [stripeInit, paypalInit] = fetch.mock.calls.map((call) => (call as unknown[])[1] as RequestInit);
    expect(stripeInit!.headers).toMatchObject({ 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'refund:pay_1' });
    expect(stripeInit!.body).toBe('a%5Bb%5D=1');
    expect(paypalInit!.headers).toMatchObject({ 'content-type': 'application/json', 'paypal-request-id': 'capture:pay_1' });
    expect(paypalInit!.headers).not.toHaveProperty('x-idempotency-key');
  });

  it('retries a write marked retry-safe with no key (an OAuth token request)', async () => {
    const fetch = stubFetch(answer(503), answer(200, { access_token: 'x' }));
    await expect(callProvider('paypal', { method: 'POST', url: 'https://provider.test/token', headers: {}, body: new URLSearchParams(), retrySafe: true })).resolves.toMatchObject({
      status: 200,
    });
    expect(fetch).toHaveBeenCalledTimes(2);
  });
});

describe("Stripe's and PayPal's addresses", () => {
  it('are their own hosts (PayPal per environment) unless STRIPE_API_URL / PAYPAL_API_URL name another (the local stack only)', async () => {
    const fetch = stubFetch(
      answer(200, { id: 'acct_1' }),
      answer(200, { access_token: 'a', app_id: 'APP-1', expires_in: 3600 }),
      answer(200, { access_token: 'b', app_id: 'APP-1', expires_in: 3600 }),
      answer(200, { id: 'acct_1' }),
      answer(200, { access_token: 'c', app_id: 'APP-1', expires_in: 3600 }),
    );
    vi.stubEnv('STRIPE_API_URL', '');
    vi.stubEnv('PAYPAL_API_URL', '');
    await stripeAdapter().checkCredentials({ secret_key: 'sk_test_1' });
    await paypalAdapter().checkCredentials({ client_id: 'id', client_secret: 's' }, { environment: 'live' });
    await paypalAdapter().checkCredentials({ client_id: 'id', client_secret: 's' }, { environment: 'sandbox' });
    vi.stubEnv('STRIPE_API_URL', 'http://127.0.0.1:4598/');
    vi.stubEnv('PAYPAL_API_URL', 'http://127.0.0.1:4597');
    await stripeAdapter().checkCredentials({ secret_key: 'sk_test_1' });
    await paypalAdapter().checkCredentials({ client_id: 'id', client_secret: 's' }, { environment: 'live' });
    expect(fetch.mock.calls.map((call) => String((call as unknown[])[0]))).toEqual([
      'https://api.stripe.com/v1/account',
      'https://api-m.paypal.com/v1/oauth2/token',
      'https://api-m.sandbox.paypal.com/v1/oauth2/token',
      'http://127.0.0.1:4598/v1/account',
      'http://127.0.0.1:4597/v1/oauth2/token',
    ]);
  });
});

describe("Mercado Pago's address", () => {
  it('is api.mercadopago.com unless MERCADOPAGO_API_URL names another (a fake, on the local stack only)', async () => {
    const fetch = stubFetch(answer(200, { id: 1 }), answer(200, { id: 2 }));
    vi.stubEnv('MERCADOPAGO_API_URL', '');
    await mercadoPagoAdapter().checkCredentials({ access_token: 't' });
    vi.stubEnv('MERCADOPAGO_API_URL', 'http://127.0.0.1:4599/');
    await mercadoPagoAdapter().checkCredentials({ access_token: 't' });
    expect(fetch.mock.calls.map((call) => String((call as unknown[])[0]))).toEqual(['https://api.mercadopago.com/users/me', 'http://127.0.0.1:4599/users/me']);
  });
});
