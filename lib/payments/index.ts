import type { ProviderAdapter } from '#lib/payments/adapter.ts';
import type { Provider } from '#lib/schemas/payment.ts';

/**
 * The provider adapters, each loaded the first time a request needs it: a function serving a
 * Mercado Pago store never evaluates the Stripe or PayPal code (and the reverse). esbuild bundles
 * each module behind its dynamic import as a lazily run block, so a cold start pays only for the
 * adapters its requests use (test/infra/bundles.test.ts pins that every way into an adapter is a
 * dynamic import). The TEST gateway is not here: it needs its ledger in lib/db, which a flow hands it.
 */
export type ExternalProvider = Exclude<Provider, 'test'>;

const LOADERS: Record<ExternalProvider, () => Promise<ProviderAdapter>> = {
  mercadopago: async () => (await import('#lib/payments/mercadopago.ts')).mercadoPagoAdapter(),
  stripe: async () => (await import('#lib/payments/stripe.ts')).stripeAdapter(),
  paypal: async () => (await import('#lib/payments/paypal.ts')).paypalAdapter(),
};

/** One adapter per provider for the life of the function: PayPal's keeps its certificate cache. */
const loaded = new Map<ExternalProvider, Promise<ProviderAdapter>>();

export function loadProviderAdapter(provider: ExternalProvider): Promise<ProviderAdapter> {
  let adapter = loaded.get(provider);
  if (!adapter) {
    adapter = LOADERS[provider]();
    loaded.set(provider, adapter);
    // A module that failed to load is tried again on the next request.
    adapter.catch(() => loaded.delete(provider));
  }
  return adapter;
}
