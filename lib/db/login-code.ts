import { randomInt } from 'node:crypto';
import { currentTimeMs } from '#lib/clock.ts';
import { acceptedHashes, keyedHash, type ServerKeys } from '#lib/crypto.ts';
import { storePk } from '#lib/db/keys.ts';
import { rateWindow } from '#lib/db/rate-limit.ts';
import { put, remove, retrying, update, writeGuarded, writeIf } from '#lib/db/transact.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * E-mail login codes: one live code per store and e-mail; a new login replaces it.
 *
 * | access pattern           | key / condition                                                 | calls |
 * |--------------------------|-----------------------------------------------------------------|-------|
 * | issue a code             | TransactWrite: rate counter Update + Put `STORE#<s> / LOGIN_CODE#<email>` | 1 |
 * | verify, right code       | DeleteItem if `code_hash IN (:hashes) AND attempts < 5 AND expires_at > :now` | 1 |
 * | verify, wrong code       | the DeleteItem above (fails) + UpdateItem `ADD attempts 1` if `attempts < 5` | 2 |
 *
 * The code is never stored: only an HMAC-SHA256 of store, e-mail and code under the server
 * secret (lib/server-secret.ts), so a table dump alone cannot recover a live code by trying all
 * 10^6 (an unkeyed hash could be inverted in under a second), and a hash is worthless for any
 * other address or store. A code is hashed with the current key; the check accepts the hash
 * under the previous key too while a rotation's grace period lasts (`:hashes` holds one or two). Success deletes the item, so a code works once. Every check sits
 * in a condition evaluated by DynamoDB, so concurrent guesses cannot pass 5 attempts, and expiry
 * is compared there too (TTL deletion lags). Issuing is limited to 5 codes per e-mail per
 * 10-minute window: each code gets 5 guesses, so without a limit on codes an attacker could
 * request codes forever (and flood the mailbox).
 */
export const LOGIN_CODE_TTL_SECONDS = 600;
export const LOGIN_CODE_MAX_ATTEMPTS = 5;
export const LOGIN_CODES_PER_WINDOW = 5;
export const LOGIN_CODE_WINDOW_SECONDS = 600;

export const loginCodeKey = (storeId: number, email: string) => ({ pk: storePk(storeId), sk: `${ENTITY.LOGIN_CODE}#${email.toLowerCase()}` });

const loginCodeMessage = (storeId: number, email: string, code: string) => `login-code:v1\n${storeId}\n${email.toLowerCase()}\n${code}`;

/** The stored hash of a code: under the current server key. */
export const loginCodeHash = (keys: ServerKeys, storeId: number, email: string, code: string) => keyedHash(keys.current, loginCodeMessage(storeId, email, code));

/** A fresh 6-digit code for this e-mail (the caller mails it). `now` is injectable for expiry tests. */
export async function issueLoginCode(keys: ServerKeys, storeId: number, email: string, now = currentTimeMs()): Promise<{ code: string; expires_in: number }> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const expiresEpoch = Math.floor(now / 1000) + LOGIN_CODE_TTL_SECONDS;
  const rate = rateWindow(storeId, `LOGIN#${email.toLowerCase()}`, LOGIN_CODES_PER_WINDOW, LOGIN_CODE_WINDOW_SECONDS, now);
  await retrying(() =>
    writeGuarded([
      rate.write,
      {
        // No condition: a new code replaces the previous one.
        item: put({
          Item: {
            ...loginCodeKey(storeId, email),
            entity: ENTITY.LOGIN_CODE,
            store_id: storeId,
            code_hash: loginCodeHash(keys, storeId, email, code),
            attempts: 0,
            created_at: new Date(now).toISOString(),
            expires_at: new Date(now + LOGIN_CODE_TTL_SECONDS * 1000).toISOString(),
            expires_epoch: expiresEpoch,
          },
        }),
      },
    ]),
  );
  return { code, expires_in: LOGIN_CODE_TTL_SECONDS };
}

/** True when the code was right, live and unused (and is now spent); false otherwise. */
export async function consumeLoginCode(keys: ServerKeys, storeId: number, email: string, code: string, now = currentTimeMs()): Promise<boolean> {
  const key = loginCodeKey(storeId, email);
  const nowIso = new Date(now).toISOString();
  const hashes = Object.fromEntries(acceptedHashes(keys, loginCodeMessage(storeId, email, code)).map((hash, i) => [`:hash${i}`, hash]));
  const spent = await writeIf(
    remove({
      Key: key,
      ConditionExpression: `code_hash IN (${Object.keys(hashes).join(', ')}) AND attempts < :max AND expires_at > :now`,
      ExpressionAttributeValues: { ...hashes, ':max': LOGIN_CODE_MAX_ATTEMPTS, ':now': nowIso },
    }),
  );
  if (spent) return true;
  // False when there is no code, or its attempts are spent: nothing left to count.
  await writeIf(
    update({
      Key: key,
      UpdateExpression: 'ADD attempts :one',
      ConditionExpression: 'attribute_exists(pk) AND attempts < :max',
      ExpressionAttributeValues: { ':one': 1, ':max': LOGIN_CODE_MAX_ATTEMPTS },
    }),
  );
  return false;
}
