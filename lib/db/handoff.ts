import { currentTimeMs } from '#lib/clock.ts';
import { hashSecret, newSecret, SECRET_PREFIX } from '#lib/crypto.ts';
import { fieldsOf, type StoredItem } from '#lib/db/entity.ts';
import { rateWindow } from '#lib/db/rate-limit.ts';
import { putNewItem, remove, retrying, writeGuarded, writeReturning } from '#lib/db/transact.ts';
import { badRequest } from '#lib/errors.ts';
import type { Customer } from '#lib/schemas/buyer.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { HANDOFF_TTL_SECONDS, type IdentifyResult } from '#lib/schemas/handoff.ts';

/**
 * Handoffs: single-use, 60-second passes that let the store owner's server learn which
 * customer is logged in on the store's pages.
 *
 * | access pattern | key / condition                                                                  | calls |
 * |----------------|----------------------------------------------------------------------------------|-------|
 * | issue          | TransactWrite: rate counter Update (`STORE#<s> / RATE#HANDOFF#<customer>#<minute>`, `n < 20`) + Put `HANDOFF#<sha256> / #HANDOFF` | 1 |
 * | exchange       | DeleteItem `HANDOFF#<sha256>` if `store_id = :store AND expires_at > :now`, ReturnValues ALL_OLD | 1 |
 *
 * The item is keyed by the handoff's hash, so the handoff itself is never stored. The exchange
 * is one conditional delete: of any number of concurrent exchanges exactly one gets the item
 * back, and a foreign store's key or a late exchange fails the condition without consuming it.
 * Expiry is in the condition because TTL deletion (`expires_epoch`) can lag by days.
 */
export const HANDOFFS_PER_MINUTE = 20;
const RATE_WINDOW_SECONDS = 60;
const HANDOFF_FORMAT = new RegExp(`^${SECRET_PREFIX.handoff}_[A-Za-z0-9_-]{43}$`);

export const handoffKey = (handoff: string) => ({ pk: `${ENTITY.HANDOFF}#${hashSecret(handoff)}`, sk: '#HANDOFF' });

/** What an exchanged handoff answers: the identity it carries and when it was issued. */
function handoffFromItem(item: StoredItem): IdentifyResult {
  const field = fieldsOf(item, ENTITY.HANDOFF);
  const customer = field.object('customer', (identity) => ({
    store_id: identity.number('store_id'),
    email: identity.string('email'),
    name: identity.string('name'),
    avatar: identity.stringOrNull('avatar'),
    social_id: identity.stringOrNull('social_id'),
  }));
  return { customer: { ...customer, issued_at: field.string('issued_at') } };
}

/** The same answer for every failure, so a caller cannot tell used from foreign from made up. */
export const handoffInvalid = () => badRequest('Invalid, used or expired handoff', 'HANDOFF_INVALID');

/** Issues a handoff carrying the customer's identity as it is now. `now` is injectable for expiry tests. */
export async function issueHandoff(customer: Customer, now = currentTimeMs()): Promise<{ handoff: string; expires_in: number }> {
  const handoff = newSecret(SECRET_PREFIX.handoff);
  const rate = rateWindow(customer.store_id, `${ENTITY.HANDOFF}#${customer.id}`, HANDOFFS_PER_MINUTE, RATE_WINDOW_SECONDS, now);
  const item = {
    ...handoffKey(handoff),
    entity: ENTITY.HANDOFF,
    store_id: customer.store_id,
    customer_id: customer.id,
    customer: { store_id: customer.store_id, email: customer.email, name: customer.name, avatar: customer.avatar, social_id: customer.social_id },
    issued_at: new Date(now).toISOString(),
    expires_at: new Date(now + HANDOFF_TTL_SECONDS * 1000).toISOString(),
    expires_epoch: Math.floor(now / 1000) + HANDOFF_TTL_SECONDS,
  };
  await retrying(() =>
    writeGuarded([
      rate.write,
      // 256 random bits: a collision means the random source is broken.
      { item: putNewItem(item), onConditionFailed: () => new Error('handoff secret collision') },
    ]),
  );
  return { handoff, expires_in: HANDOFF_TTL_SECONDS };
}

/** Consumes the handoff for the key's store and returns the identity it carries. */
export async function exchangeHandoff(storeId: number, handoff: string, now = currentTimeMs()): Promise<IdentifyResult> {
  if (!HANDOFF_FORMAT.test(handoff)) throw handoffInvalid();
  const item = await writeReturning(
    {
      item: remove({
        Key: handoffKey(handoff),
        ConditionExpression: 'store_id = :store AND expires_at > :now',
        ExpressionAttributeValues: { ':store': storeId, ':now': new Date(now).toISOString() },
      }),
      onConditionFailed: handoffInvalid,
    },
    'ALL_OLD',
  );
  // The condition holds only on an existing item, so ALL_OLD always brings it back.
  return handoffFromItem(item ?? {});
}
