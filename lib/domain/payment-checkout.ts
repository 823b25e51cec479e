import { isLive } from '#lib/domain/payment.ts';
import { GATEWAY_PROVIDER, GATEWAYS, RETURN_URL_MAX, type Gateway, type PaymentRecord, type Provider } from '#lib/schemas/payment.ts';

/*
 * The buyer-facing rules of paying (extensions section 13), pure: which gateways a store offers,
 * and where a redirect checkout may send the buyer back.
 */

/** One entry of `GET /webstore/gateway`, the shape the real system's clients read. */
export interface GatewayChoice {
  gateway: Gateway;
  display: string;
  /** The lower-case provider or method name, for icons. */
  name: string;
  fee: 0;
  is_percentage_fee: false;
}

const DISPLAY: Record<Gateway, string> = { PIX: 'PIX', MERCADOPAGO: 'Mercado Pago', STRIPE: 'Stripe', PAYPAL: 'PayPal', TEST: 'Test payment' };

export interface ProviderOffer {
  provider: Provider;
  enabled: boolean;
  /** The gateways the operator chose for it (Mercado Pago: PIX and/or MERCADOPAGO; the others: their one gateway). */
  gateways: readonly Gateway[];
}

/**
 * The gateways a buyer may choose: those of enabled provider accounts, each under its own provider
 * only, in one fixed order. TEST only where the stage allows it (the local stack, `testGateway=true`).
 */
export function gatewayChoices(offers: readonly ProviderOffer[], testAllowed: boolean): GatewayChoice[] {
  const offered = new Set(offers.filter((offer) => offer.enabled).flatMap((offer) => offer.gateways.filter((gateway) => GATEWAY_PROVIDER[gateway] === offer.provider)));
  return GATEWAYS.filter((gateway) => offered.has(gateway) && (gateway !== 'TEST' || testAllowed)).map((gateway) => ({
    gateway,
    display: DISPLAY[gateway],
    name: gateway.toLowerCase(),
    fee: 0,
    is_percentage_fee: false,
  }));
}

export { RETURN_URL_MAX };

/**
 * No open redirect: a `return_url` must be https on the store's own domain (its default port) or on
 * one of its `allowed_origins`; plain http (any port on the store's domain) only where the stack
 * serves stores over http (the local stack). No user name or password in it, and at most 2048
 * characters. The same origins CORS lets call the storefront (lib/http/cors.ts).
 */
export function returnUrlAllowed(value: string, store: { domain: string; allowed_origins: readonly string[] }, plainHttp: boolean): boolean {
  if (value.length > RETURN_URL_MAX || !URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.username !== '' || url.password !== '') return false;
  const secure = url.protocol === 'https:';
  if (!secure && !(plainHttp && url.protocol === 'http:')) return false;
  const ownDomain = url.hostname === store.domain && (url.port === '' || !secure);
  return ownDomain || store.allowed_origins.includes(url.origin);
}

/**
 * How a request for a payment of `gateway` is met (the checkout, `POST /webstore/order/{id}/payment`):
 * a live payment of the same gateway is the answer (a CREATED one is finished: its create call
 * carries the same idempotency key, so the provider answers the charge it made); otherwise a new
 * payment, and every other live payment of the order is canceled (a new gateway replaces them).
 */
export type PaymentStart = { kind: 'existing'; payment: PaymentRecord } | { kind: 'new'; replaces: PaymentRecord[] };

export function paymentStart(payments: readonly PaymentRecord[], gateway: Gateway): PaymentStart {
  const live = payments.filter((payment) => isLive(payment.status));
  const same = live.find((payment) => payment.gateway === gateway);
  return same ? { kind: 'existing', payment: same } : { kind: 'new', replaces: live };
}
