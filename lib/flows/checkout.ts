import { currentTimeMs } from '#lib/clock.ts';
import { readCart } from '#lib/db/cart.ts';
import { orderResponse, type OrderItem } from '#lib/db/order.ts';
import { createOnce } from '#lib/db/idempotency.ts';
import { getQuote, newQuoteId, putQuote, quoteIdValid } from '#lib/db/quote.ts';
import { assessCart, cartSignature, cartValues, variableNamesGiven, type CartRequest } from '#lib/domain/cart.ts';
import { orderPayments } from '#lib/db/payment.ts';
import type { GuardedWrite } from '#lib/db/transact.ts';
import { providerUnavailable } from '#lib/errors.ts';
import { cancelPending, placeOrder } from '#lib/flows/order.ts';
import { ChargeFailed, chargeFailedAnswer, choosePayment, paymentAnswer, paymentForOrder, type PaymentChoice } from '#lib/flows/payment-start.ts';
import { QUOTE_TTL_SECONDS, type CheckoutAnswer, type CheckoutBody, type Quote, type QuoteBody } from '#lib/schemas/checkout.ts';
import { serverKeys } from '#lib/server-secret.ts';

/*
 * The storefront's quote and checkout (section 8): the same read (lib/db/cart.ts) and the same
 * rules (lib/domain/cart.ts) as `POST /app/order`, so a cart gets the same price and the same
 * refusals on every path. Calls exclude the store-domain lookup.
 *
 * | use case | calls                                                                                    |
 * |----------|------------------------------------------------------------------------------------------|
 * | quote    | BatchGet (packages, cart index), [BatchGet of the promos, variables and categories they  |
 * |          | name; BatchGet coupon / limit counters], [BatchGet of the promos a category names], Put  |
 * |          | quote (lib/db/cart.ts): 2 to 5                                                           |
 * | checkout | as placing any order (lib/flows/order.ts): 4, or 5; the quote and the buyer are read in   |
 * |          | the first BatchGet; with a gateway + 2 before (lib/flows/payment-start.ts: store and      |
 * |          | accounts) and + 3 after (the order's payments, CREATED, PENDING) around the provider call |
 *
 * Quote ids carry a MAC bound to the store under the server secret (lib/db/quote.ts): read once
 * per container (lib/server-secret.ts), no DynamoDB call.
 */

/** The cart of a quote or checkout body as the cart rules read it. */
function storefrontCart(body: QuoteBody | CheckoutBody) {
  const given = cartValues(body.fields, body.cart);
  const lines = body.cart.map((line, index) => ({ package_id: line.package_id, quantity: line.quantity, field: `cart.${index}`, values: given.lines[index]! }));
  const request: Omit<CartRequest, 'client_email'> = {
    lines,
    values: given.values,
    valuesField: 'fields',
    coupon: body.coupon,
    ref_code: body.ref_code,
    client_identifier: body.client_identifier,
    terms: body.terms,
    // A quote is judged as the checkout will be, due item included.
    extraWrites: 1,
    inputProblems: given.problems,
  };
  return { request, signature: cartSignature({ lines, values: given.values, coupon: body.coupon, ref_code: body.ref_code }) };
}

/** Prices a cart without reserving anything, checks every rule at once, and keeps the quote 15 minutes. */
export async function quoteCart(storeId: number, body: QuoteBody): Promise<Quote> {
  // The retry of a quote whose answer was lost (the same Idempotency-Key) answers the quote issued, and issues none more.
  return createOnce(
    async (quoteId: string) => {
      const { prices, ...issued } = await getQuote(storeId, quoteId);
      return { quote_id: issued.quote_id, expires_at: issued.expires_at, ...(prices as Omit<Quote, 'quote_id' | 'expires_at'>) };
    },
    (recordOnKey) => issueQuote(storeId, body, recordOnKey),
  );
}

async function issueQuote(storeId: number, body: QuoteBody, recordOnKey: (quoteId: string) => GuardedWrite[]): Promise<Quote> {
  const { request, signature } = storefrontCart(body);
  const read = await readCart(storeId, {
    packageIds: request.lines.map((line) => line.package_id),
    coupon: body.coupon,
    refCode: body.ref_code,
    client_email: body.client_email,
    client_identifier: body.client_identifier,
    quoteId: null,
    customerId: null,
    storefront: true,
    variableNames: variableNamesGiven(request),
  });
  const now = currentTimeMs();
  const { prices } = assessCart({ ...request, client_email: body.client_email }, { ...read, quoted: null }, now);
  const quote = { quote_id: newQuoteId(await serverKeys(), storeId), expires_at: new Date(now + QUOTE_TTL_SECONDS * 1000).toISOString() };
  await putQuote(storeId, { ...quote, signature, prices }, recordOnKey(quote.quote_id));
  return { ...quote, ...prices };
}

/**
 * A storefront order, PENDING until paid (or canceled 30 minutes on), by a guest or a logged-in
 * buyer. With a `gateway` (section 13) the gateway and `return_url` are checked before anything is
 * written, and the order's first payment is created in the same call; the provider refusing or
 * unreachable cancels the order at once (stock, limits and coupon given back) and answers 502.
 */
export async function checkout(storeId: number, customerId: number | null, body: CheckoutBody, apiBase: string): Promise<CheckoutAnswer> {
  const choice = body.gateway === null ? null : await choosePayment(storeId, body.gateway, body.return_url);
  const { request, signature } = storefrontCart(body);
  // An id that is not this store's (edited, another store's, made up) is no quote: priced now, as an unknown one.
  const quoteId = body.quote_id !== null && quoteIdValid(await serverKeys(), storeId, body.quote_id) ? body.quote_id : null;
  const order = await placeOrder(storeId, {
    request,
    client: { ...body, client_email: body.client_email ?? null },
    customerId,
    quote: quoteId === null ? null : { id: quoteId, signature },
    checkout: { client_document: body.client_document, client_phone: body.client_phone, gateway: choice?.gateway ?? null, terms: body.terms, customer_id: customerId },
  });
  const answer = { ...orderResponse(order), order_id: order.internal_id };
  return choice ? { ...answer, ...(await checkoutPayment(choice, order, apiBase)) } : answer;
}

/** The checkout's payment, and the order canceled at once when its provider does not take it. */
async function checkoutPayment(choice: PaymentChoice, order: OrderItem, apiBase: string) {
  // An Idempotency-Key retry of a checkout whose order moved on (paid, or canceled when its provider failed): the same answer.
  if (order.status !== 'PENDING') {
    const earlier = (await orderPayments(order.store_id, order.id)).find((payment) => payment.gateway === choice.gateway);
    if (!earlier || earlier.status === 'CANCELED') throw providerUnavailable(`${choice.account.provider} did not take the payment; the order was canceled`);
    return paymentAnswer(earlier);
  }
  try {
    return paymentAnswer((await paymentForOrder(choice, order, apiBase)).payment);
  } catch (error) {
    if (!(error instanceof ChargeFailed)) throw error;
    await cancelPending(order.store_id, order.id, (current) => (current.status === 'PENDING' ? 'apply' : 'already'));
    throw chargeFailedAnswer(error);
  }
}
