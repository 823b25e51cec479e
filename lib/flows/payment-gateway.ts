import { config } from '#lib/config.ts';
import { gatewayChoices, type GatewayChoice } from '#lib/domain/payment-checkout.ts';
import { listProviderAccounts } from '#lib/db/payment-provider.ts';

/**
 * `GET /webstore/gateway`: the gateways of the store's enabled provider accounts (TEST only where
 * the stage offers it), one Query. A module of its own: the buyers' list loads no adapter and no
 * keyring (lib/flows/payment-provider.ts has both).
 */
export async function storeGateways(storeId: number): Promise<GatewayChoice[]> {
  return gatewayChoices(await listProviderAccounts(storeId), config.testGatewayAllowed);
}
