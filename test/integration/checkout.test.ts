import { describe, expect, it } from 'vitest';
import { cancelUnpaidOrders } from '#lib/flows/unpaid.ts';
import { buyerLogin, uniqueEmail } from '../support/buyer.ts';
import { CLIENT, createDiscount, createPackage, createPromo, createVariable, orderBody, placeOrder, type Store } from '../support/builders.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/** The storefront's buying side over HTTP (section 8), on a store's x-store-domain. */
const web = (store: Store) => {
  const headers = { 'x-store-domain': store.domain };
  return {
    quote: (body: unknown) => call('POST', '/v1/webstore/cart/quote', { json: body, headers }),
    checkout: (body: unknown, token?: string) => call('POST', '/v1/webstore/checkout', { json: body, headers, token }),
    status: (orderId: string) => call('GET', `/v1/webstore/order_status/${orderId}`, { headers }),
  };
};

const BUYER = { client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' };
const stockOf = async (store: Store, packageId: number) => (await store.get(`/v1/app/package/${packageId}`)).body.stock as number | null;
const usesOf = async (store: Store, discountId: number) => (await store.get(`/v1/app/discount/${discountId}`)).body.uses as number;
const orderCount = async (store: Store) => (await store.get('/v1/app/order')).body.meta.total as number;
const errorsOf = (res: { body: { errors: { field?: string; code?: string }[] } }) => res.body.errors.map((e) => `${e.field}:${e.code}`);

/** A store with a 10.00 package, a 2.50 SELECT option on it, and a 10% promo from 2 units. */
async function pricedStore() {
  const store = await newStore();
  const pkg = await createPackage(store, { name: 'VIP', price: 10 });
  const server = await createVariable(store, {
    name: 'server',
    type: 'SELECT',
    applies_to: [pkg.id],
    options: [
      { name: 'Survival', value: 'survival', price: 2.5 },
      { name: 'Creative', value: 'creative' },
    ],
  });
  const promo = await createPromo(store, { name: 'Two or more' });
  return { store, pkg, server, promo };
}

describe('one pricing engine for every path', () => {
  it('prices POST /app/order with the promos in force and the option prices, and stores the breakdown', async () => {
    const { store, pkg, promo } = await pricedStore();
    const order = await placeOrder(store, { ...CLIENT, packages: [{ package_id: pkg.id, quantity: 2 }], variables: [{ name: 'server', value: 'survival' }] });
    // (10.00 + 2.50) x 2 = 25.00; the promo's tier (2 units) takes 10%: 2.50; total 22.50
    expect(order).toMatchObject({ subtotal: 25, promo_discount: 2.5, coupon_discount: 0, discount: 2.5, total: 22.5 });
    expect(order.packages).toEqual([
      {
        package_id: pkg.id,
        name: 'VIP',
        price: 10,
        quantity: 2,
        options_price: 2.5,
        subtotal: 25,
        promo_discount: 2.5,
        promo_id: promo.id,
        coupon_discount: 0,
        total: 22.5,
        variables: [],
        expires_at: null,
      },
    ]);
    expect((await store.get(`/v1/app/order/${order.id}`)).body).toEqual(order);
  });

  it('gives the quote and the order the same prices for the same cart, coupon after promos', async () => {
    const { store, pkg } = await pricedStore();
    const other = await createPackage(store, { name: 'Kit', price: 3.33 });
    await createDiscount(store, { coupon: 'FIVE', type: 'VALUE', value: 5 });
    const quote = await web(store).quote({
      cart: [
        { package_id: pkg.id, quantity: 3, fields: { server: 'survival' } },
        { package_id: other.id, quantity: 1 },
      ],
      coupon: 'five',
    });
    expect(quote.status, quote.text).toBe(200);
    // lines: 12.50 x 3 = 37.50 and 3.33; promo 10% (4 units): 3.75 and 0.33; after promos 33.75 + 3.00 = 36.75;
    // VALUE coupon 5.00 shared by amounts after promos: 5 x 33.75 / 36.75 = 4.59, the last line takes 0.41
    expect(quote.body).toMatchObject({ subtotal: 40.83, promo_discount: 4.08, coupon_discount: 5, discount: 9.08, total: 31.75, coupon: 'FIVE' });
    const order = await placeOrder(store, {
      ...CLIENT,
      packages: [
        { package_id: pkg.id, quantity: 3 },
        { package_id: other.id, quantity: 1 },
      ],
      variables: [{ name: 'server', value: 'survival' }],
      coupon: 'FIVE',
    });
    expect(order.packages).toEqual(
      quote.body.items.map(({ unit_price, ...line }: { unit_price: number }) => ({ ...line, price: unit_price })).map((line: object) => expect.objectContaining(line)),
    );
    for (const total of ['subtotal', 'promo_discount', 'coupon_discount', 'discount', 'total']) expect(order[total], total).toBe(quote.body[total]);
  });
});

describe('POST /v1/webstore/cart/quote', () => {
  it('answers the Quote, kept 15 minutes, with next_tiers; costs 4 calls, 5 with a coupon', async () => {
    const { store, pkg, promo } = await pricedStore();
    await createDiscount(store, { coupon: 'TEN', type: 'PERCENTAGE', value: 10 });
    const before = Date.now();
    const res = await web(store).quote({ cart: [{ package_id: pkg.id, quantity: 1 }], fields: { server: 'creative' }, client_id: 'ignored', extra: { nested: true } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      quote_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/),
      expires_at: expect.any(String),
      items: [{ package_id: pkg.id, name: 'VIP', quantity: 1, unit_price: 10, options_price: 0, subtotal: 10, promo_discount: 0, promo_id: null, coupon_discount: 0, total: 10 }],
      subtotal: 10,
      promo_discount: 0,
      coupon_discount: 0,
      discount: 0,
      total: 10,
      coupon: null,
      next_tiers: [{ promo_id: promo.id, name: 'Two or more', missing: 1, reward_type: 'PERCENTAGE', reward_value: 10 }],
    });
    const expiresIn = Date.parse(res.body.expires_at) - before;
    expect(expiresIn).toBeGreaterThan(14.9 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(15 * 60_000 + 5_000);
    // store domain + BatchGet (the package, the cart index) + BatchGet (the promo the index names) + quote Put
    expect(dynamoDbCalls(res)).toBe(4);
    // + BatchGet of the coupon and its counters, beside the second one (those are read consistently, the promos not)
    expect(dynamoDbCalls(await web(store).quote({ cart: [{ package_id: pkg.id, quantity: 1 }], coupon: 'ten' }))).toBe(5);
  });

  it('reports every problem of the cart at once, each with its field, and reserves nothing', async () => {
    const { store, pkg } = await pricedStore();
    const disabled = await createPackage(store, { enabled: false });
    const scarce = await createPackage(store, { stock: 1 });
    const limited = await createPackage(store, { per_customer_limit: 1 });
    await createVariable(store, { name: 'nick', required: true, regex: '[a-z]+' });
    await createDiscount(store, { coupon: 'OLD', expires_in: '2021-01-01T00:00:00Z' });
    const other = await newStore();
    for (let i = 0; i < 4; i++) await createPackage(other);
    const foreign = await createPackage(other);
    const res = await web(store).quote({
      cart: [
        { package_id: 999_999, quantity: 1 },
        { package_id: disabled.id, quantity: 1 },
        { package_id: scarce.id, quantity: 2 },
        { package_id: limited.id, quantity: 2 },
        { package_id: pkg.id, quantity: 1, fields: { server: 'hardcore', colour: 'red' } },
      ],
      fields: { SERVER: 'survival' },
      coupon: 'old',
      client_email: 'steve@example.com',
    });
    expect(res.status, res.text).toBe(422);
    expect(errorsOf(res)).toEqual([
      'cart.0.package_id:VALIDATION_FAILED',
      'cart.1.package_id:PACKAGE_DISABLED',
      'cart.2.quantity:OUT_OF_STOCK',
      'cart.3.quantity:LIMIT_REACHED',
      'cart.4.fields.server:VALIDATION_FAILED',
      'cart.4.fields.colour:VALIDATION_FAILED',
      'fields:VALIDATION_FAILED',
      'coupon:COUPON_EXPIRED',
    ]);
    // another store's package (id 5 there, none here) is simply not in this store
    const foreignRes = await web(store).quote({ cart: [{ package_id: foreign.id, quantity: 1 }], fields: { nick: 'steve' } });
    expect(errorsOf(foreignRes)).toEqual(['cart.0.package_id:VALIDATION_FAILED']);
    expect(await stockOf(store, scarce.id)).toBe(1);
  });

  it('refuses a deactivated SELECT option', async () => {
    const { store, pkg, server } = await pricedStore();
    expect(
      (
        await store.patch(`/v1/app/variable/${server.id}`, {
          options: [
            { name: 'Creative', value: 'creative' },
            { name: 'Skyblock', value: 'skyblock' },
          ],
        })
      ).status,
    ).toBe(200);
    const res = await web(store).quote({ cart: [{ package_id: pkg.id, quantity: 1 }], fields: { server: 'survival' } });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('fields.server');
    expect((await web(store).quote({ cart: [{ package_id: pkg.id, quantity: 1 }], fields: { server: 'skyblock' } })).status).toBe(200);
  });

  it.each([
    ['no cart', {}, 'cart'],
    ['quantity 0', { cart: [{ package_id: 1, quantity: 0 }] }, 'cart.0.quantity'],
    [
      'a package twice',
      {
        cart: [
          { package_id: 1, quantity: 1 },
          { package_id: 1, quantity: 1 },
        ],
      },
      'cart.1.package_id',
    ],
    ['a field that is an object', { cart: [{ package_id: 1, quantity: 1 }], fields: { server: {} } }, 'fields.server'],
    ['coupon a number', { cart: [{ package_id: 1, quantity: 1 }], coupon: 5 }, 'coupon'],
    ['client_email not an e-mail', { cart: [{ package_id: 1, quantity: 1 }], client_email: 'nope' }, 'client_email'],
    ['ref_code with a space', { cart: [{ package_id: 1, quantity: 1 }], ref_code: 'a b' }, 'ref_code'],
  ])('refuses %s (422 naming the field)', async (_, body, field) => {
    const store = await newStore();
    await createPackage(store);
    const res = await web(store).quote(body);
    expect(res.status, res.text).toBe(422);
    expect(firstError(res).field).toBe(field);
  });

  it('needs x-store-domain of a known store', async () => {
    expect((await call('POST', '/v1/webstore/cart/quote', { json: { cart: [] } })).status).toBe(400);
    expect((await call('POST', '/v1/webstore/cart/quote', { json: { cart: [] }, headers: { 'x-store-domain': 'nobody.test.localhost' } })).status).toBe(404);
  });
});

describe("a cart line's own fields (section 8)", () => {
  /** Two packages a SELECT variable applies to, its option priced 1.00, each package with a command naming it. */
  async function twoPackages() {
    const store = await newStore();
    const vip = await createPackage(store, { name: 'VIP', price: 10, commands: [{ command: 'vip {Steve} {server}' }] });
    const kit = await createPackage(store, { name: 'Kit', price: 5, commands: [{ command: 'kit {server}' }] });
    await createVariable(store, {
      name: 'server',
      type: 'SELECT',
      applies_to: [vip.id, kit.id],
      options: [
        { name: 'Big', value: 'big', price: 1 },
        { name: 'Small', value: 'small' },
      ],
    });
    return { store, vip, kit };
  }

  it("prices an option chosen in the first line's fields on that line alone", async () => {
    const { store, vip, kit } = await twoPackages();
    const res = await web(store).quote({
      cart: [
        { package_id: vip.id, quantity: 1, fields: { server: 'big' } },
        { package_id: kit.id, quantity: 2 },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.items.map((item: { options_price: number; subtotal: number }) => [item.options_price, item.subtotal])).toEqual([
      [1, 11],
      [0, 10],
    ]);
    expect(res.body.total).toBe(21);
  });

  it("applies order-level fields to every line, a line's own value over them; the order shows each line's own variables and renders its commands with them", async () => {
    const { store, vip, kit } = await twoPackages();
    const cart = [
      { package_id: vip.id, quantity: 1, fields: { server: 'small' } },
      { package_id: kit.id, quantity: 1 },
    ];
    const quote = await web(store).quote({ cart, fields: { server: 'big' } });
    expect(quote.body.items.map((item: { options_price: number }) => item.options_price)).toEqual([0, 1]);
    const res = await web(store).checkout({ cart, fields: { server: 'big' }, quote_id: quote.body.quote_id, ...BUYER });
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(16);
    expect(res.body.variables).toEqual([{ name: 'server', value: 'big' }]);
    expect(res.body.packages.map((line: { variables: unknown }) => line.variables)).toEqual([[{ name: 'server', value: 'small' }], []]);
    expect((await store.post(`/v1/app/order/${res.body.id}/approve`)).status).toBe(200);
    const commands = (await store.get(`/v1/app/order/${res.body.id}/command`)).body;
    expect(commands.map((command: { command: string }) => command.command)).toEqual(['vip {Steve} small', 'kit big']);
  });

  it('refuses a cart missing a required value on one line only, on that line, placing nothing', async () => {
    const { store, vip, kit } = await twoPackages();
    await createVariable(store, { name: 'nick', required: true, applies_to: [vip.id, kit.id] });
    const cart = [
      { package_id: vip.id, quantity: 1, fields: { nick: 'a' } },
      { package_id: kit.id, quantity: 1 },
    ];
    const res = await web(store).quote({ cart });
    expect(res.status).toBe(422);
    expect(errorsOf(res)).toEqual(['cart.1.fields:VALIDATION_FAILED']);
    const refused = await web(store).checkout({ cart, ...BUYER });
    expect(errorsOf(refused)).toEqual(['cart.1.fields:VALIDATION_FAILED']);
    expect(await orderCount(store)).toBe(0);
    const checkout = await web(store).checkout({
      cart: [
        { package_id: kit.id, quantity: 1, fields: { nick: 'a' } },
        { package_id: vip.id, quantity: 1 },
      ],
      fields: { nick: 'b' },
      ...BUYER,
    });
    expect(checkout.status, checkout.text).toBe(200);
    expect(await orderCount(store)).toBe(1);
  });
});

describe("the store's terms (terms_url)", () => {
  it('when set, refuses a quote or checkout without terms: true (422 on terms, nothing placed); when null, terms stays optional', async () => {
    const { store, pkg } = await pricedStore();
    const cart = [{ package_id: pkg.id, quantity: 1 }];
    expect((await web(store).quote({ cart })).status).toBe(200);
    expect((await web(store).checkout({ cart, ...BUYER })).status).toBe(200);
    expect((await store.patch('/v1/app/store', { terms_url: 'https://shop.example.com/terms' })).status).toBe(200);
    for (const terms of [undefined, null, false]) {
      const quote = await web(store).quote({ cart, terms });
      expect(quote.status, quote.text).toBe(422);
      expect(errorsOf(quote)).toEqual(['terms:VALIDATION_FAILED']);
      const refused = await web(store).checkout({ cart, terms, ...BUYER });
      expect(errorsOf(refused)).toEqual(['terms:VALIDATION_FAILED']);
    }
    expect(await orderCount(store)).toBe(1);
    expect(await stockOf(store, pkg.id)).toBeNull();
    expect((await web(store).quote({ cart, terms: 'yes' })).status).toBe(422);
    const quote = await web(store).quote({ cart, terms: true });
    expect(quote.status, quote.text).toBe(200);
    const placed = await web(store).checkout({ cart, terms: true, quote_id: quote.body.quote_id, ...BUYER });
    expect(placed.status, placed.text).toBe(200);
    // store domain + BatchGet (packages, quote, the store item for its terms, the cart index) + BatchGet (what the index names)
    // + order id ADD + TransactWrite: the same calls as without terms.
    expect(dynamoDbCalls(placed)).toBe(5);
    expect(await orderCount(store)).toBe(2);
    expect((await store.patch('/v1/app/store', { terms_url: null })).status).toBe(200);
    expect((await web(store).checkout({ cart, ...BUYER })).status).toBe(200);
  });
});

describe('POST /v1/webstore/checkout', () => {
  it('places a guest PENDING order with order_id and status, reserving stock and the coupon; costs 6 calls', async () => {
    const { store, pkg } = await pricedStore();
    await store.patch(`/v1/app/package/${pkg.id}`, { stock: 5 });
    const coupon = await createDiscount(store, { coupon: 'TEN', type: 'PERCENTAGE', value: 10 });
    const res = await web(store).checkout({
      cart: [{ package_id: pkg.id, quantity: 2, fields: { server: 'creative' } }],
      coupon: 'ten',
      ...BUYER,
      client_document: '123.456.789-09',
      client_phone: '+55 11 99999-9999',
      terms: true,
      user_id: 'ignored',
    });
    expect(res.status, res.text).toBe(200);
    // 10.00 x 2 = 20.00; promo 10% = 2.00; coupon 10% of 18.00 = 1.80; total 16.20
    expect(res.body).toMatchObject({
      status: 'PENDING',
      order_id: res.body.internal_id,
      subtotal: 20,
      promo_discount: 2,
      coupon_discount: 1.8,
      discount: 3.8,
      total: 16.2,
      coupon: 'TEN',
      client_email: 'steve@example.com',
    });
    // store domain + BatchGet (packages, cart index) + BatchGets (coupon and counters; promos) + order id ADD + TransactWrite
    expect(dynamoDbCalls(res)).toBe(6);
    expect(await stockOf(store, pkg.id)).toBe(3);
    expect(await usesOf(store, coupon.id)).toBe(1);
    expect((await store.get(`/v1/app/order/${res.body.id}`)).body).toEqual(Object.fromEntries(Object.entries(res.body).filter(([key]) => key !== 'order_id')));
  });

  it("carries a quote's prices after its promo ended, for the same cart in any line order; another cart, or no quote, is priced now", async () => {
    const { store, pkg, promo } = await pricedStore();
    const kit = await createPackage(store, { name: 'Kit', price: 5 });
    const cart = [
      { package_id: pkg.id, quantity: 2 },
      { package_id: kit.id, quantity: 1 },
    ];
    const quote = await web(store).quote({ cart, fields: { server: 'creative' } });
    // 20.00 + 5.00; promo 10% on 3 units: 2.00 + 0.50
    expect(quote.body.total).toBe(22.5);
    expect((await store.patch(`/v1/app/promo/${promo.id}`, { enabled: false })).status).toBe(200);
    const honoured = await web(store).checkout({ cart: [...cart].reverse(), fields: { server: 'creative' }, quote_id: quote.body.quote_id, ...BUYER });
    expect(honoured.status, honoured.text).toBe(200);
    expect(honoured.body).toMatchObject({ total: 22.5, promo_discount: 2.5 });
    expect(honoured.body.packages.map((line: { promo_id: number }) => line.promo_id)).toEqual([promo.id, promo.id]);
    const otherCart = await web(store).checkout({
      cart: [
        { package_id: pkg.id, quantity: 1 },
        { package_id: kit.id, quantity: 1 },
      ],
      fields: { server: 'creative' },
      quote_id: quote.body.quote_id,
      ...BUYER,
    });
    expect(otherCart.status, otherCart.text).toBe(200);
    expect(otherCart.body).toMatchObject({ total: 15, promo_discount: 0 });
    const otherFields = await web(store).checkout({ cart, fields: { server: 'survival' }, quote_id: quote.body.quote_id, ...BUYER });
    // priced now, with the option: 12.50 x 2 + 5.00
    expect(otherFields.body).toMatchObject({ total: 30, promo_discount: 0 });
    const noQuote = await web(store).checkout({ cart, fields: { server: 'creative' }, ...BUYER });
    expect(noQuote.body).toMatchObject({ total: 25, promo_discount: 0 });
    const unknownQuote = await web(store).checkout({ cart, fields: { server: 'creative' }, quote_id: 'nope', ...BUYER });
    expect(unknownQuote.body).toMatchObject({ total: 25 });
    // An edited id (its random part or its MAC changed by one character) is no quote: priced now.
    const [random, mac] = (quote.body.quote_id as string).split('.') as [string, string];
    const flip = (text: string) => `${text.slice(0, -1)}${text.endsWith('A') ? 'B' : 'A'}`;
    for (const edited of [`${flip(random)}.${mac}`, `${random}.${flip(mac)}`, random, `${quote.body.quote_id}.x`]) {
      const res = await web(store).checkout({ cart, fields: { server: 'creative' }, quote_id: edited, ...BUYER });
      expect(res.status, edited).toBe(200);
      expect(res.body, edited).toMatchObject({ total: 25, promo_discount: 0 });
    }
  });

  it("does not honour another store's quote_id", async () => {
    const a = await pricedStore();
    const b = await newStore();
    const bPkg = await createPackage(b, { name: 'VIP', price: 10 });
    expect(bPkg.id).toBe(a.pkg.id);
    const quote = await web(a.store).quote({ cart: [{ package_id: a.pkg.id, quantity: 2 }] });
    expect(quote.body.total).toBe(18);
    const res = await web(b).checkout({ cart: [{ package_id: bPkg.id, quantity: 2 }], quote_id: quote.body.quote_id, ...BUYER });
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(20);
    // Tried at B, the quote is still A's: A's checkout honours it after the promo ended.
    expect((await a.store.patch(`/v1/app/promo/${a.promo.id}`, { enabled: false })).status).toBe(200);
    const atA = await web(a.store).checkout({ cart: [{ package_id: a.pkg.id, quantity: 2 }], quote_id: quote.body.quote_id, ...BUYER });
    expect(atA.status, atA.text).toBe(200);
    expect(atA.body.total).toBe(18);
  });

  it("makes a logged-in buyer's order the buyer's: client_email left out, or the buyer's in any case; another is 422, a bad token 401", async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 3 });
    const buyer = await buyerLogin(store.domain);
    const { client_email: _omitted, ...guest } = BUYER;
    const res = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...guest }, buyer.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.client_email).toBe(buyer.email.toLowerCase());
    expect((await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...guest, client_email: buyer.email.toUpperCase() }, buyer.token)).status).toBe(200);

    const wrong = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER }, buyer.token);
    expect(wrong.status).toBe(422);
    expect(firstError(wrong).field).toBe('client_email');
    const bad = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER }, 'sbt_unknown');
    expect(bad.status).toBe(401);
    expect(firstError(bad).code).toBe('CUSTOMER_UNAUTHENTICATED');
    const otherStore = await newStore();
    const foreignBuyer = await buyerLogin(otherStore.domain);
    expect((await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER }, foreignBuyer.token)).status).toBe(401);
    const guestWithout = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...guest });
    expect(guestWithout.status).toBe(422);
    expect(firstError(guestWithout).field).toBe('client_email');
    // only the two good checkouts took stock
    expect(await stockOf(store, pkg.id)).toBe(1);
    expect(await orderCount(store)).toBe(2);
  });

  it("answers the store's own web origin (CORS), as the other storefront routes do", async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const origin = `https://${store.domain}`;
    const res = await call('POST', '/v1/webstore/checkout', {
      json: { cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER },
      headers: { 'x-store-domain': store.domain, origin },
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(origin);
    const refused = await call('POST', '/v1/webstore/checkout', { json: { cart: [] }, headers: { 'x-store-domain': store.domain, origin: 'https://evil.example' } });
    expect(refused.status).toBe(422);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it.each([
    ['client_name missing', { client_name: undefined }, 'client_name'],
    ['client_document too long', { client_document: 'x'.repeat(33) }, 'client_document'],
    ['client_phone too long', { client_phone: '1'.repeat(33) }, 'client_phone'],
    ['gateway too long', { gateway: 'g'.repeat(51) }, 'gateway'],
    ['terms not a boolean', { terms: 'yes' }, 'terms'],
    ['quote_id not a string', { quote_id: 5 }, 'quote_id'],
  ])('refuses %s (422) and changes nothing', async (_, patch, field) => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 2 });
    const res = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, ...patch });
    expect(res.status, res.text).toBe(422);
    expect(firstError(res).field).toBe(field);
    expect(await stockOf(store, pkg.id)).toBe(2);
    expect(await orderCount(store)).toBe(0);
  });
});

describe('stock and per-customer limits', () => {
  it('takes stock when an order is placed and gives it back when it is canceled; a disabled package cannot be ordered', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 3 });
    const order = await placeOrder(store, { ...CLIENT, packages: [{ package_id: pkg.id, quantity: 2 }] });
    expect(await stockOf(store, pkg.id)).toBe(1);
    const over = await store.post('/v1/app/order', { ...CLIENT, packages: [{ package_id: pkg.id, quantity: 2 }] });
    expect(over.status).toBe(422);
    expect(firstError(over)).toMatchObject({ code: 'OUT_OF_STOCK', field: 'packages.0.quantity' });
    expect((await store.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(200);
    expect(await stockOf(store, pkg.id)).toBe(3);

    await store.patch(`/v1/app/package/${pkg.id}`, { enabled: false });
    const disabled = await store.post('/v1/app/order', orderBody(pkg.id));
    expect(disabled.status).toBe(422);
    expect(firstError(disabled)).toMatchObject({ code: 'PACKAGE_DISABLED', field: 'packages.0.package_id' });
    expect(await stockOf(store, pkg.id)).toBe(3);
  });

  it('cancels an order whose package was made unlimited since, leaving the stock unlimited', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 3 });
    const order = await placeOrder(store, orderBody(pkg.id));
    await store.patch(`/v1/app/package/${pkg.id}`, { stock: null });
    expect((await store.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(200);
    expect(await stockOf(store, pkg.id)).toBeNull();
  });

  it('never sells more than the stock: 20 orders racing for 5 units', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 5 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.post('/v1/app/order', { ...CLIENT, client_email: `r${i}@example.com`, packages: [{ package_id: pkg.id, quantity: 1 }] })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    for (const refused of results.filter((r) => r.status !== 200)) {
      expect(refused.status, refused.text).toBe(422);
      expect(firstError(refused).code).toBe('OUT_OF_STOCK');
    }
    expect(await stockOf(store, pkg.id)).toBe(0);
    expect(await orderCount(store)).toBe(5);
  });

  it('limits the units one customer (e-mail, ignoring case) holds in PENDING and APPROVED orders, gives them back on cancel', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { per_customer_limit: 2 });
    const first = await placeOrder(store, { ...CLIENT, packages: [{ package_id: pkg.id, quantity: 2 }] });
    await store.post(`/v1/app/order/${first.id}/approve`);
    const over = await store.post('/v1/app/order', { ...CLIENT, client_email: 'STEVE@example.com', packages: [{ package_id: pkg.id, quantity: 1 }] });
    expect(over.status).toBe(422);
    expect(firstError(over)).toMatchObject({ code: 'LIMIT_REACHED', field: 'packages.0.quantity' });
    expect((await store.post('/v1/app/order', { ...CLIENT, client_email: 'ann@example.com', packages: [{ package_id: pkg.id, quantity: 2 }] })).status).toBe(200);
    const quote = await web(store).quote({ cart: [{ package_id: pkg.id, quantity: 1 }], client_email: 'Steve@Example.com' });
    expect(errorsOf(quote)).toEqual(['cart.0.quantity:LIMIT_REACHED']);
    // without client_email a quote cannot know the customer
    expect((await web(store).quote({ cart: [{ package_id: pkg.id, quantity: 1 }] })).status).toBe(200);

    const other = await newStore();
    const otherPkg = await createPackage(other, { per_customer_limit: 1 });
    const held = await placeOrder(other, orderBody(otherPkg.id));
    expect((await other.post('/v1/app/order', orderBody(otherPkg.id))).status).toBe(422);
    await other.post(`/v1/app/order/${held.id}/cancel`);
    expect((await other.post('/v1/app/order', orderBody(otherPkg.id))).status).toBe(200);
  });

  it('never lets one customer pass the limit: 10 checkouts racing for a limit of 3', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { per_customer_limit: 3 });
    const results = await Promise.all(Array.from({ length: 10 }, () => web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    for (const refused of results.filter((r) => r.status !== 200)) expect(firstError(refused).code).toBe('LIMIT_REACHED');
  });
});

describe('the unpaid-order job', () => {
  it('cancels a checkout order still PENDING 30 minutes after it was placed, giving back stock, limits and coupon', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 4, per_customer_limit: 2 });
    const coupon = await createDiscount(store, { coupon: 'ONE', type: 'VALUE', value: 1 });
    const placedAt = Date.now();
    const unpaid = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 2 }], coupon: 'one', ...BUYER });
    const paid = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, client_email: 'ann@example.com' });
    const manual = await placeOrder(store, { ...CLIENT, client_email: 'bob@example.com', packages: [{ package_id: pkg.id, quantity: 1 }] });
    expect(unpaid.status, unpaid.text).toBe(200);
    await store.post(`/v1/app/order/${paid.body.id}/approve`);
    expect(await stockOf(store, pkg.id)).toBe(0);

    await cancelUnpaidOrders(placedAt + 29 * 60_000);
    expect((await web(store).status(unpaid.body.order_id)).body).toEqual({ status: 'PENDING' });

    await cancelUnpaidOrders(placedAt + 32 * 60_000);
    expect((await web(store).status(unpaid.body.order_id)).body).toEqual({ status: 'CANCELED' });
    expect((await web(store).status(paid.body.order_id)).body).toEqual({ status: 'APPROVED' });
    expect((await store.get(`/v1/app/order/${manual.id}`)).body.status).toBe('PENDING');
    expect(await stockOf(store, pkg.id)).toBe(2);
    expect(await usesOf(store, coupon.id)).toBe(0);
    // the limit is free again for that customer
    expect((await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 2 }], ...BUYER })).status).toBe(200);
  });
});

describe('GET /v1/webstore/order_status/{order_id}', () => {
  it("answers the status only; unknown and other stores' orders are 404; 4 calls while PENDING", async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const order = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER });
    const res = await web(store).status(order.body.order_id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'PENDING' });
    // store domain + sentinel GetItem + order GetItem + the Query of a PENDING order's payments (pull on poll: none live here, no provider asked)
    expect(dynamoDbCalls(res)).toBe(4);
    expect((await web(store).status('nope')).status).toBe(404);
    expect((await web(await newStore()).status(order.body.order_id)).status).toBe(404);
  });
});

describe("a buyer's own orders", () => {
  it('lists them newest first by e-mail (guest and operator orders included), pages by cursor, and gets one; 3 calls each', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const buyer = await buyerLogin(store.domain, uniqueEmail('ann'));
    const mine = [
      await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, client_email: buyer.email.toUpperCase() }),
      await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 2 }], ...BUYER, client_email: buyer.email }, buyer.token),
      { body: await placeOrder(store, { ...CLIENT, client_email: buyer.email, packages: [{ package_id: pkg.id, quantity: 3 }] }) },
    ];
    await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER });
    const first = await buyer.get('/v1/webstore/order?page_size=2');
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.map((o: { internal_id: string }) => o.internal_id)).toEqual([mine[2]!.body.internal_id, mine[1]!.body.internal_id]);
    // credential and store domain + customer GetItem + gsi3 Query
    expect(dynamoDbCalls(first)).toBe(3);
    const second = await buyer.get(`/v1/webstore/order?page_size=2&page_cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ internal_id: mine[0]!.body.internal_id })], next_cursor: null });

    const one = await buyer.get(`/v1/webstore/order/${mine[0]!.body.internal_id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ internal_id: mine[0]!.body.internal_id, status: 'PENDING', total: 10, packages: [expect.objectContaining({ package_id: pkg.id })] });
    // credential and store domain + BatchGet (sentinel, customer) + order GetItem
    expect(dynamoDbCalls(one)).toBe(3);
  });

  it("answers another buyer's order 404, refuses a tampered or foreign cursor (400), and another store's orders are not there", async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const ann = await buyerLogin(store.domain, uniqueEmail('ann'));
    const bob = await buyerLogin(store.domain, uniqueEmail('bob'));
    for (let i = 0; i < 2; i++) await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, client_email: ann.email });
    const bobs = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, client_email: bob.email });
    expect((await ann.get(`/v1/webstore/order/${bobs.body.order_id}`)).status).toBe(404);
    expect((await ann.get('/v1/webstore/order/nope')).status).toBe(404);

    const page = await ann.get('/v1/webstore/order?page_size=1');
    expect(page.body.data).toHaveLength(1);
    const foreign = await bob.get(`/v1/webstore/order?page_size=1&page_cursor=${page.body.next_cursor}`);
    expect(foreign.status).toBe(400);
    expect(firstError(foreign).code).toBe('INVALID_CURSOR');
    const tampered = await ann.get(`/v1/webstore/order?page_size=1&page_cursor=${page.body.next_cursor}x`);
    expect(tampered.status).toBe(400);
    expect((await ann.get('/v1/webstore/order?page_size=201')).status).toBe(422);

    const elsewhere = await newStore();
    const annElsewhere = await buyerLogin(elsewhere.domain, ann.email);
    expect((await annElsewhere.get('/v1/webstore/order')).body).toEqual({ data: [], next_cursor: null });
    expect((await annElsewhere.get(`/v1/webstore/order/${page.body.data[0].internal_id}`)).status).toBe(404);
    expect((await call('GET', '/v1/webstore/order', { headers: { 'x-store-domain': store.domain } })).status).toBe(401);
  });
});
