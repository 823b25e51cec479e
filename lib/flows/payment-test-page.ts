import { currentTimeMs } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import { readProviderAccount } from '#lib/db/payment-provider.ts';
import { testChargeLedger, testChargeOwner, type TestChargeOwner } from '#lib/db/test-charge.ts';
import { conflict, notFound } from '#lib/errors.ts';
import { testPageUrl } from '#lib/flows/payment-adapters.ts';
import { PROVIDER_TIMEOUT_MS } from '#lib/payments/http.ts';
import { openSecrets } from '#lib/payments/secrets.ts';
import { testAccountOf, testGatewayAction, testNotification, type TestAction, type TestCharge } from '#lib/payments/test-gateway.ts';
import { testGatewayPage } from '#lib/payments/test-gateway-page.ts';

/*
 * The TEST gateway's page (section 13), where the TEST gateway is offered (the local stack, a stage
 * deployed with `testGateway=true`; 404 elsewhere). The page is addressed by the charge's ref alone
 * (lib/db/test-charge.ts `testChargeOwner`: ref -> account and store).
 *
 * | use case | calls                                                                                  |
 * |----------|----------------------------------------------------------------------------------------|
 * | page     | GetItem ref owner + GetItem charge: 2                                                  |
 * | button   | GetItem ref owner + GetItem TEST account, GetItem charge + Put if unchanged: 4, then   |
 * |          | the signed notification POSTed to the store's notify URL, the same path as a provider's |
 */

async function ownerOf(ref: string): Promise<TestChargeOwner> {
  if (!config.testGatewayAllowed) throw notFound('TEST payment');
  const owner = await testChargeOwner(ref);
  if (!owner) throw notFound('TEST payment');
  return owner;
}

async function chargeOf(owner: TestChargeOwner, ref: string): Promise<TestCharge> {
  const charge = await testChargeLedger.get(owner.account, ref);
  if (!charge) throw notFound('TEST payment');
  return charge;
}

/** The page: the charge, and a button for each action the pretend provider allows now. */
export async function testPaymentPage(ref: string, apiBase: string, notified: string | null): Promise<string> {
  const charge = await chargeOf(await ownerOf(ref), ref);
  const notice = notified === null ? null : notified === 'unreachable' ? 'The store could not be notified.' : `The store's notify route answered ${notified}.`;
  return testGatewayPage({ charge, pageUrl: testPageUrl(apiBase, ref), now: currentTimeMs(), notice });
}

/**
 * A button: the charge changed at the pretend provider (409 when the provider would not allow it
 * now), then the signed notification POSTed to the store's notify URL, as a real provider sends
 * one. Answers what the notify route answered (its HTTP status), or 'unreachable'.
 */
export async function testPaymentAction(ref: string, action: TestAction): Promise<{ notified: string }> {
  const owner = await ownerOf(ref);
  const account = await readProviderAccount(owner.store_id, 'test');
  if (!account) throw notFound('TEST payment');
  const secret = (await openSecrets(account.secrets_ct, { store_id: owner.store_id, provider: 'test' })).signing_secret ?? '';
  // A charge of another signing secret than the store's (none is ever replaced): not this store's to notify about.
  if (testAccountOf(secret) !== owner.account) throw notFound('TEST payment');
  let changed: TestCharge | undefined;
  for (let attempt = 0; attempt < 2 && !changed; attempt += 1) {
    const charge = await chargeOf(owner, ref);
    const next = testGatewayAction(charge, action, currentTimeMs());
    if (!next) throw conflict(`A ${charge.status} TEST payment${charge.dispute ? ` with a dispute ${charge.dispute}` : ''} cannot take "${action}"`);
    if (await testChargeLedger.replace(next, charge)) changed = next;
  }
  if (!changed) throw conflict('The TEST payment changed meanwhile; try again');
  if (!changed.notification_url) return { notified: 'unreachable' };
  const { body, headers } = testNotification(changed, secret, currentTimeMs());
  try {
    const answer = await fetch(changed.notification_url, { method: 'POST', headers, body, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
    await answer.body?.cancel();
    return { notified: String(answer.status) };
  } catch {
    return { notified: 'unreachable' };
  }
}
