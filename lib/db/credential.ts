import { currentTimeMs } from '#lib/clock.ts';
import { hashSecret, newSecret, SECRET_PREFIX } from '#lib/crypto.ts';
import { fieldsOf, getMany, putNew, readItem, type StoredItem } from '#lib/db/entity.ts';
import { nowIso, padId, storePk } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { domainFromItem, domainKey, type DomainEntry } from '#lib/db/store.ts';
import { CREDENTIAL_PK_PREFIX, CREDENTIAL_USE_ATTRIBUTE } from '#lib/db/table.ts';
import { put, putNewItem, remove, update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
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
 * | a store's operator tokens and keys (admin `token list`, `key list`) | Query `STORE#<s>` `begins_with CREDENTIAL_ENTRY#`, then BatchGet their `CRED#` items (only live ones listed) |
 * | note an operator credential's use  | UpdateItem `CRED#<sha256>` `SET last_used_at` if it exists and its mark is over an hour old |
 *
 * An operator credential (API token, API key) is written with its entry in its store's list
 * (`STORE#<s> / CREDENTIAL_ENTRY#<id>`: kind, scopes, server, created_at and the secret's hash,
 * never the secret), in one transaction, and the admin command line revokes both. The list still
 * reads the credentials themselves, so an entry a revocation elsewhere left behind is not shown.
 * Credentials made before these entries existed are not listed.
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
 *
 * "Last used" of an API token or key (admin `token list`, `key list`) is `last_used_at` on the
 * credential item, to the hour: the lookup every request makes already reads it, so a request
 * writes only when the mark is over an hour old (`isLastUseStale`), at most once per credential
 * per hour, and the write's own condition makes concurrent requests agree on one mark. Read routes
 * are granted exactly this write (lib/db/table.ts `CREDENTIAL_USE_ATTRIBUTE`).
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
  /** An API token's or key's last use, to the hour (`noteCredentialUse`); absent until its first. */
  last_used_at?: string;
}

const CREDENTIAL_KINDS = ['api_token', 'api_key', 'buyer_token', 'session'] as const satisfies readonly CredentialKind[];

export const credentialKey = (secretHash: string) => ({ pk: `${CREDENTIAL_PK_PREFIX}${secretHash}`, sk: '#CRED' });

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
    last_used_at: field.optionalString(CREDENTIAL_USE_ATTRIBUTE),
  };
}

/** How fresh "last used" is kept: a use within this long of the mark writes nothing. */
export const LAST_USE_RESOLUTION_MS = 3600 * 1000;

/** Whether a use at `nowMs` should move the credential's mark (only API tokens and keys carry one). */
export const isLastUseStale = (credential: Credential, nowMs: number): boolean =>
  (credential.kind === 'api_token' || credential.kind === 'api_key') &&
  (credential.last_used_at === undefined || Date.parse(credential.last_used_at) <= nowMs - LAST_USE_RESOLUTION_MS);

/**
 * Marks the credential of `secret` used at `nowMs`: one conditional UpdateItem, which writes only
 * when the credential still exists and its mark is over an hour old (another request may have
 * moved it since this one read it). False when the condition refused it, which is no error.
 */
export function noteCredentialUse(secret: string, nowMs: number): Promise<boolean> {
  return writeIf(
    update({
      Key: credentialKey(hashSecret(secret)),
      UpdateExpression: `SET ${CREDENTIAL_USE_ATTRIBUTE} = :now`,
      ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(${CREDENTIAL_USE_ATTRIBUTE}) OR ${CREDENTIAL_USE_ATTRIBUTE} <= :stale)`,
      ExpressionAttributeValues: { ':now': new Date(nowMs).toISOString(), ':stale': new Date(nowMs - LAST_USE_RESOLUTION_MS).toISOString() },
    }),
  );
}

export const BUYER_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

const putCredential = (secret: string, credential: Credential): Promise<void> => putNew(credentialItem(hashSecret(secret), credential));

/** An operator credential (it has a `credential_id`) as its store's list shows it: never the secret. */
export interface OperatorCredential {
  id: number;
  kind: 'api_token' | 'api_key';
  scopes: string[];
  server_id: number | null;
  created_at: string;
  /** To the hour; null until its first use. */
  last_used_at: string | null;
}
type OperatorCredentialRecord = Credential & { kind: 'api_token' | 'api_key'; credential_id: number };

const ENTRY_PREFIX = `${ENTITY.CREDENTIAL_ENTRY}#`;
export const credentialEntryKey = (storeId: number, credentialId: number) => ({ pk: storePk(storeId), sk: `${ENTRY_PREFIX}${padId(credentialId)}` });

/** The Puts of a new operator credential and of its entry in the store's list, for one transaction. */
function operatorCredentialPuts(hash: string, credential: OperatorCredentialRecord): GuardedWrite[] {
  const { store_id, credential_id, kind, scopes, server_id, created_at } = credential;
  return [
    { item: putNewItem(credentialItem(hash, credential)), onConditionFailed: () => new Error('credential secret collision') },
    {
      item: put({
        Item: {
          ...credentialEntryKey(store_id, credential_id),
          entity: ENTITY.CREDENTIAL_ENTRY,
          store_id,
          kind,
          scopes: scopes ?? [],
          ...(server_id === undefined ? {} : { server_id }),
          credential_hash: hash,
          created_at,
        },
      }),
    },
  ];
}

async function newOperatorCredential(storeId: number, kind: 'api_token' | 'api_key', scopes?: string[]) {
  const credentialId = await nextId(storeId, ENTITY.CREDENTIAL);
  const secret = newSecret(kind === 'api_token' ? SECRET_PREFIX.apiToken : SECRET_PREFIX.apiKey);
  const credential: OperatorCredentialRecord = { kind, store_id: storeId, credential_id: credentialId, ...(scopes ? { scopes } : {}), created_at: nowIso() };
  return { secret, credential_id: credentialId, puts: operatorCredentialPuts(hashSecret(secret), credential) };
}

export async function createApiToken(storeId: number): Promise<{ api_token: string; credential_id: number }> {
  const { secret, credential_id, puts } = await newOperatorCredential(storeId, 'api_token');
  await writeGuarded(puts);
  return { api_token: secret, credential_id };
}

export async function createApiKey(storeId: number, scopes: string[]): Promise<{ key: string; credential_id: number; scopes: string[] }> {
  const { secret, credential_id, puts } = await newOperatorCredential(storeId, 'api_key', scopes);
  await writeGuarded(puts);
  return { key: secret, credential_id, scopes };
}

/**
 * The Deletes that revoke an operator credential and its list entry, for one transaction: the
 * credential only if it is of this kind and store (as every revoke), `onGone` otherwise.
 */
export function operatorRevokeDeletes(secret: string, kind: 'api_token' | 'api_key', storeId: number, credentialId: number, onGone: () => Error): GuardedWrite[] {
  return [
    {
      item: remove({
        Key: credentialKey(hashSecret(secret)),
        ConditionExpression: 'kind = :kind AND store_id = :store',
        ExpressionAttributeValues: { ':kind': kind, ':store': storeId },
      }),
      onConditionFailed: onGone,
    },
    { item: remove({ Key: credentialEntryKey(storeId, credentialId) }) },
  ];
}

/**
 * Rotation of an API key: a new key with the old one's scopes (and server), and the old one
 * revoked, in one transaction (never both valid for long, never neither). `extraWrites` are the
 * caller's (a delivery key's entry under its server, lib/db/server.ts).
 */
export async function rotateApiKey(
  oldKey: string,
  old: Credential & { credential_id: number },
  onGone: () => Error,
  extraWrites: (newHash: string, credentialId: number) => GuardedWrite[] = () => [],
): Promise<{ key: string; credential_id: number; scopes: string[] }> {
  const scopes = old.scopes ?? [];
  const credentialId = await nextId(old.store_id, ENTITY.CREDENTIAL);
  const key = newSecret(SECRET_PREFIX.apiKey);
  const hash = hashSecret(key);
  const credential: OperatorCredentialRecord = {
    kind: 'api_key',
    store_id: old.store_id,
    credential_id: credentialId,
    scopes,
    ...(old.server_id === undefined ? {} : { server_id: old.server_id }),
    created_at: nowIso(),
  };
  await writeGuarded([
    ...operatorRevokeDeletes(oldKey, 'api_key', old.store_id, old.credential_id, onGone),
    ...operatorCredentialPuts(hash, credential),
    ...extraWrites(hash, credentialId),
  ]);
  return { key, credential_id: credentialId, scopes };
}

function credentialEntryFromItem(item: StoredItem) {
  const field = fieldsOf(item, ENTITY.CREDENTIAL_ENTRY);
  return {
    id: Number(field.string('sk').slice(ENTRY_PREFIX.length)),
    kind: field.oneOf('kind', ['api_token', 'api_key'] as const),
    scopes: field.strings('scopes'),
    server_id: field.optionalNumber('server_id') ?? null,
    created_at: field.string('created_at'),
    hash: field.string('credential_hash'),
  };
}

/** The store's live API tokens or keys, in id order: one Query, then one BatchGet per 100. */
export async function listOperatorCredentials(storeId: number, kind: 'api_token' | 'api_key'): Promise<OperatorCredential[]> {
  const entries = (await queryAll({ pk: storePk(storeId), skPrefix: ENTRY_PREFIX })).map(credentialEntryFromItem).filter((entry) => entry.kind === kind);
  const live = await getMany(entries.map((entry) => credentialKey(entry.hash)));
  return entries.flatMap(({ hash: _hash, ...entry }, at) => {
    const credential = live[at];
    if (credential?.store_id !== storeId) return [];
    return [{ ...entry, last_used_at: credentialFromItem(credential).last_used_at ?? null }];
  });
}

/** The scope of a game server's key: claim and ack its commands (lib/flows/delivery.ts). */
export const DELIVERY_SCOPE = 'delivery';

/**
 * A new `delivery` key bound to a game server: the secret (shown once), its hash, and the Put of
 * its credential for the caller's transaction (which also files it under its server, for revocation).
 */
export async function newDeliveryKey(storeId: number, serverId: number): Promise<{ key: string; credential_id: number; hash: string; puts: GuardedWrite[] }> {
  const credentialId = await nextId(storeId, ENTITY.CREDENTIAL);
  const key = newSecret(SECRET_PREFIX.apiKey);
  const credential: OperatorCredentialRecord = {
    kind: 'api_key',
    store_id: storeId,
    credential_id: credentialId,
    scopes: [DELIVERY_SCOPE],
    server_id: serverId,
    created_at: nowIso(),
  };
  const hash = hashSecret(key);
  return { key, credential_id: credentialId, hash, puts: operatorCredentialPuts(hash, credential) };
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
