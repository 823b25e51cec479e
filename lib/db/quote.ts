import { randomBytes } from 'node:crypto';
import { keyedHash, macMatches, type ServerKeys } from '#lib/crypto.ts';
import { fieldsOf, newItemWrite, readItem, type StoredItem } from '#lib/db/entity.ts';
import { storePk } from '#lib/db/keys.ts';
import { writeGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Quotes: the prices a storefront showed for a cart, kept 15 minutes so that a checkout of the
 * same cart carries exactly them (section 8). Calls exclude the credential lookup.
 *
 * | access pattern          | key                                                   | calls   |
 * |-------------------------|-------------------------------------------------------|---------|
 * | issue                   | PutItem `STORE#<s> / QUOTE#<quote_id>` (TTL `expires_epoch`) | 1 |
 * | read at checkout        | in the cart's BatchGet (lib/db/cart.ts)               | 0 extra |
 *
 * The key holds the store, so a quote id of another store finds nothing. A quote id is 128 random
 * bits and an HMAC of them and the store under the server secret (`<random>.<mac>`): the checkout
 * honours only an id whose MAC is right for ITS store (`quoteIdValid`, no read for any other), so
 * an edited id, one of another store, or one put together from a table dump (which holds ids but
 * not how to MAC a new one) is simply priced now. Made with the current key; the previous one is
 * accepted while a rotation's grace period lasts (longer than a quote lives). TTL deletion lags
 * (days on AWS): the checkout compares `expires_at` with its own clock, never trusting absence.
 */
const MAC_LENGTH = 22;
const quoteMessage = (storeId: number, random: string) => `quote:v1:${storeId}:${random}`;

/** A new quote id of this store. */
export function newQuoteId(keys: ServerKeys, storeId: number): string {
  const random = randomBytes(16).toString('base64url');
  return `${random}.${keyedHash(keys.current, quoteMessage(storeId, random)).slice(0, MAC_LENGTH)}`;
}

/** True for an id this server issued for this store (under the current or the previous key). */
export function quoteIdValid(keys: ServerKeys, storeId: number, quoteId: string): boolean {
  const [random, mac, ...rest] = quoteId.split('.');
  return Boolean(random && mac && rest.length === 0 && macMatches(keys, quoteMessage(storeId, random), mac, MAC_LENGTH));
}

export const quoteKey = (storeId: number, quoteId: string) => ({ pk: storePk(storeId), sk: `${ENTITY.QUOTE}#${quoteId}` });

export interface StoredQuote<P = unknown> {
  quote_id: string;
  /** What the quote was issued for (lib/domain/cart.ts `cartSignature`). */
  signature: string;
  expires_at: string;
  prices: P;
}

/** A Put, or with `alsoWrite` (the Idempotency-Key's record of it) one TransactWrite. */
export async function putQuote(storeId: number, quote: StoredQuote, alsoWrite: readonly GuardedWrite[] = []): Promise<void> {
  const item = { ...quoteKey(storeId, quote.quote_id), entity: ENTITY.QUOTE, store_id: storeId, ...quote, expires_epoch: Math.ceil(Date.parse(quote.expires_at) / 1000) };
  await writeGuarded([newItemWrite(item), ...alsoWrite]);
}

/** A quote as stored (consistent; 404 once TTL removed it). */
export async function getQuote(storeId: number, quoteId: string): Promise<StoredQuote> {
  const item = await readItem(quoteKey(storeId, quoteId), true);
  if (!item) throw notFound('Quote');
  return quoteFromItem(item);
}

/** `prices` as stored: the checkout checks them against the cart it prices (lib/domain/cart.ts). */
export function quoteFromItem(item: StoredItem): StoredQuote {
  const field = fieldsOf(item, ENTITY.QUOTE);
  return { quote_id: field.string('quote_id'), signature: field.string('signature'), expires_at: field.string('expires_at'), prices: field.raw('prices') };
}
