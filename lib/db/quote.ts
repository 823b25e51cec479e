import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { storePk } from '#lib/db/keys.ts';

/**
 * Quotes: the prices a storefront showed for a cart, kept 15 minutes so that a checkout of the
 * same cart carries exactly them (section 8). Calls exclude the credential lookup.
 *
 * | access pattern          | key                                                   | calls   |
 * |-------------------------|-------------------------------------------------------|---------|
 * | issue                   | PutItem `STORE#<s> / QUOTE#<quote_id>` (TTL `expires_epoch`) | 1 |
 * | read at checkout        | in the cart's BatchGet (lib/db/cart.ts)               | 0 extra |
 *
 * The key holds the store, so a quote id of another store finds nothing. TTL deletion lags
 * (days on AWS): the checkout compares `expires_at` with its own clock, never trusting absence.
 */
export const quoteKey = (storeId: number, quoteId: string) => ({ pk: storePk(storeId), sk: `QUOTE#${quoteId}` });

export interface StoredQuote<P = unknown> {
  quote_id: string;
  /** What the quote was issued for (lib/domain/cart.ts `cartSignature`). */
  signature: string;
  expires_at: string;
  prices: P;
}

export async function putQuote(storeId: number, quote: StoredQuote): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: TABLE,
      Item: { ...quoteKey(storeId, quote.quote_id), entity: 'QUOTE', store_id: storeId, ...quote, expires_epoch: Math.ceil(Date.parse(quote.expires_at) / 1000) },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export function quoteFromItem(item: Record<string, unknown> | undefined): StoredQuote | undefined {
  if (!item) return undefined;
  return { quote_id: String(item.quote_id), signature: String(item.signature), expires_at: String(item.expires_at), prices: item.prices };
}
