import { currentTimeMs } from '#lib/clock.ts';
import { hashSecret, newSecret, SECRET_PREFIX } from '#lib/crypto.ts';
import { fieldsOf, getMany, putNew, readItem, type StoredItem } from '#lib/db/entity.ts';
import { nowIso } from '#lib/db/keys.ts';
import { nextId } from '#lib/db/sequence.ts';
import { domainFromItem, domainKey, type DomainEntry } from '#lib/db/store.ts';
import { putNewItem, remove, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Credentials of every kind, found by the SHA-256 of the secret the caller presents.
 *
 * | access pattern                     | key                                  |
 * |------------------------------------|--------------------------------------|
 * | credential by secret               | pk `CRED#<sha256>`, sk `#CRED`       |
 * | store of a domain (+ its allowed origins) | GetItem `DOMAIN#<domain>`, `#DOMAIN`  |
 * | credential + store of a domain     | BatchGet of the above and `DOMAIN#<domain>` |
 * | revoke (logout, new login, admin)  | DeleteItem `CRED#<sha256>` if `kind = :kind AND store_id = :store` |
 *
 * A lookup by secret cannot carry a condition (the operator's secret alone names its store), so
 * lib/http/auth.ts compares the credential's store with the Host's or x-store-domain's after the
 * read; every write that ends a credential holds the store in its own condition.
 *
 * Revocation deletes the item, so the next request with that secret finds nothing: lookups are
 * strongly consistent reads, because an eventually consistent one may still return a revoked
 * credential (or miss one issued a moment ago) on AWS; DynamoDB Local never shows the difference.
 * Buyer access tokens and sessions expire: they carry `expires_epoch` for TTL and `expires_at`,
 * which every lookup checks itself because TTL deletion lags.
 */
export type CredentialKind = 'api_token' | 'api_key' | 'buyer_token' | 'session';

export interface Credential {
  kind: CredentialKind;
  store_id: number;
  /** Per-store id of an operator token or key (the `user_id` of the notes it writes). */
  credential_id?: number;
  scopes?: string[];
  /** The game server a `delivery` key acts for (lib/db/server.ts). */
  server_id?: number;
  customer_id?: number;
  expires_at?: string;
  created_at: string;
}

const CREDENTIAL_KINDS = ['api_token', 'api_key', 'buyer_token', 'session'] as const satisfies readonly CredentialKind[];

export const credentialKey = (secretHash: string) => ({ pk: `CRED#${secretHash}`, sk: '#CRED' });

/** Tokens that expire carry `expires_epoch` for TTL. */
function credentialItem(secretHash: string, credential: Credential) {
  const expiry = credential.expires_at ? { expires_epoch: Math.floor(Date.parse(credential.expires_at) / 1000) } : {};
  return { ...credentialKey(secretHash), entity: ENTITY.CREDENTIAL, ...credential, ...expiry };
}

export function credentialFromItem(item: StoredItem): Credential {
  const field = fieldsOf(item, ENTITY.CREDENTIAL);
  return {
    kind: field.oneOf('kind', CREDENTIAL_KINDS),
    store_id: field.number('store_id'),
    credential_id: field.optionalNumber('credential_id'),
    scopes: item.scopes === undefined ? undefined : field.strings('scopes'),
    server_id: field.optionalNumber('server_id'),
    customer_id: field.optionalNumber('customer_id'),
    expires_at: field.optionalString('expires_at'),
    created_at: field.string('created_at'),
  };
}

export const BUYER_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

const putCredential = (secret: string, credential: Credential): Promise<void> => putNew(credentialItem(hashSecret(secret), credential));

export async function createApiToken(storeId: number): Promise<{ api_token: string; credential_id: number }> {
  const credentialId = await nextId(storeId, ENTITY.CREDENTIAL);
  const token = newSecret(SECRET_PREFIX.apiToken);
  await putCredential(token, { kind: 'api_token', store_id: storeId, credential_id: credentialId, created_at: nowIso() });
  return { api_token: token, credential_id: credentialId };
}

export async function createApiKey(storeId: number, scopes: string[]): Promise<{ key: string; credential_id: number; scopes: string[] }> {
  const credentialId = await nextId(storeId, ENTITY.CREDENTIAL);
  const key = newSecret(SECRET_PREFIX.apiKey);
  await putCredential(key, { kind: 'api_key', store_id: storeId, credential_id: credentialId, scopes, created_at: nowIso() });
  return { key, credential_id: credentialId, scopes };
}

/** The scope of a game server's key: claim and ack its commands (lib/flows/delivery.ts). */
export const DELIVERY_SCOPE = 'delivery';

/**
 * A new `delivery` key bound to a game server: the secret (shown once), its hash, and the Put of
 * its credential for the caller's transaction (which also files it under its server, for revocation).
 */
export async function newDeliveryKey(storeId: number, serverId: number): Promise<{ key: string; credential_id: number; hash: string; put: GuardedWrite }> {
  const credentialId = await nextId(storeId, ENTITY.CREDENTIAL);
  const key = newSecret(SECRET_PREFIX.apiKey);
  const credential: Credential = { kind: 'api_key', store_id: storeId, credential_id: credentialId, scopes: [DELIVERY_SCOPE], server_id: serverId, created_at: nowIso() };
  const hash = hashSecret(key);
  return {
    key,
    credential_id: credentialId,
    hash,
    put: {
      item: putNewItem(credentialItem(hash, credential)),
      onConditionFailed: () => new Error('credential secret collision'),
    },
  };
}

function expiresIn(seconds: number): string {
  return new Date(currentTimeMs() + seconds * 1000).toISOString();
}

export async function issueBuyerAccessToken(storeId: number, customerId: number, ttlSeconds = BUYER_TOKEN_TTL_SECONDS) {
  const token = newSecret(SECRET_PREFIX.buyerAccessToken);
  const expiresAt = expiresIn(ttlSeconds);
  await putCredential(token, { kind: 'buyer_token', store_id: storeId, customer_id: customerId, expires_at: expiresAt, created_at: nowIso() });
  return { token, expires_at: expiresAt, expires_in: ttlSeconds };
}

export async function issueSession(storeId: number, customerId: number, ttlSeconds = SESSION_TTL_SECONDS) {
  const sessionId = newSecret(SECRET_PREFIX.session);
  const expiresAt = expiresIn(ttlSeconds);
  await putCredential(sessionId, { kind: 'session', store_id: storeId, customer_id: customerId, expires_at: expiresAt, created_at: nowIso() });
  return { sessionId, expires_at: expiresAt, max_age: ttlSeconds };
}

/**
 * Deletes the credential if it is of the given kind AND belongs to the given store: both are in
 * the delete's condition, so a secret presented through another store's host or domain (or as
 * the wrong kind) revokes nothing, even when a caller skipped the lookup. False when there was
 * no such credential to revoke.
 */
export async function revokeCredential(secret: string, kind: CredentialKind, storeId: number): Promise<boolean> {
  return writeIf(
    remove({
      Key: credentialKey(hashSecret(secret)),
      ConditionExpression: 'kind = :kind AND store_id = :store',
      ExpressionAttributeValues: { ':kind': kind, ':store': storeId },
    }),
  );
}

function live(item: StoredItem | undefined): Credential | undefined {
  if (!item) return undefined;
  const credential = credentialFromItem(item);
  if (credential.expires_at && Date.parse(credential.expires_at) <= currentTimeMs()) return undefined;
  return credential;
}

/** One GetItem. Expired credentials are treated as absent. */
export async function findCredential(secret: string): Promise<Credential | undefined> {
  return live(await readItem(credentialKey(hashSecret(secret)), true));
}

export type { DomainEntry };

/** The store a domain belongs to, or undefined. One GetItem. */
export async function findDomain(domain: string): Promise<DomainEntry | undefined> {
  const item = await readItem(domainKey(domain), true);
  return item ? domainFromItem(item) : undefined;
}

/**
 * The store of a domain and (when a secret is given) its credential, in one BatchGetItem:
 * buyer requests and store-domain sessions need both, and a second round trip would double
 * their latency.
 */
export async function findDomainAndCredential(domain: string, secret: string | undefined): Promise<{ store?: DomainEntry; credential?: Credential }> {
  if (!secret) return { store: await findDomain(domain) };
  const [domainItem, storedCredential] = await getMany([domainKey(domain), credentialKey(hashSecret(secret))]);
  return { store: domainItem ? domainFromItem(domainItem) : undefined, credential: live(storedCredential) };
}
