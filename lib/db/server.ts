import { credentialEntryKey, credentialKey, newDeliveryKey } from '#lib/db/credential.ts';
import { fieldsOf, getMany, getOne, patchOne, putNewCounted, type StoredItem } from '#lib/db/entity.ts';
import { countedPage, countMove, storeList } from '#lib/db/list-count.ts';
import { entitySk, nowIso, padId, storePk } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { check, put, remove, retrying, update, writeGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { conflict, notFound, unauthenticated, unprocessable } from '#lib/errors.ts';
import type { Server, ServerCreate, ServerPatch } from '#lib/schemas/server.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { createOnce } from '#lib/db/idempotency.ts';

/**
 * Game servers and their delivery keys. Calls exclude the credential lookup.
 *
 * | access pattern                    | key                                                                     | calls    |
 * |-----------------------------------|-------------------------------------------------------------------------|----------|
 * | create                            | sequence ADD + Put `STORE#<s> / SERVER#<id>`                            | 2        |
 * | get, rename                       | GetItem / UpdateItem conditioned on existence                           | 1        |
 * | list (id order)                   | Query `STORE#<s>`, sk begins_with `SERVER#`                             | 1 per MB |
 * | names of some servers             | BatchGetItem                                                            | 1        |
 * | seen by a claim                   | UpdateItem `last_seen_at` conditioned on existence (a deleted server's key is refused) | 1 |
 * | new key                           | credential id ADD + TransactWrite (ConditionCheck server, Put `CRED#<sha256>`, Put `SERVER_KEY#<server>#<credential>`) | 2 |
 * | delete                            | DeleteItem conditioned on no package naming it + Query `SERVER_KEY#<id>#` + TransactWrite deleting the keys (50 per call) | 3 |
 * | packages naming it                | `ref_packages` (number set) on the server: ADD / DELETE in the package's transaction | 0 extra |
 *
 * A package's command templates name servers; each named server holds the ids of the packages
 * that name it (`ref_packages`), changed in the package's own transaction with a condition that
 * the server exists (422 otherwise), so a server cannot be deleted while a template names it (409
 * naming those packages), even when the delete races a package write. A key's credential item
 * carries its server; the `SERVER_KEY` item files the key's hash under its server so that
 * deleting the server revokes every key.
 */
const SERVER = ENTITY.SERVER;
export const serverKey = (storeId: number, serverId: number) => ({ pk: storePk(storeId), sk: entitySk(SERVER, serverId) });
const keyIndexPrefix = (serverId: number) => `${ENTITY.SERVER_KEY}#${padId(serverId)}#`;

/** A server; one never seen by a claim (or stored before claims noted it) has no last_seen_at. Its `ref_packages` stay in the table. */
export function serverFromItem(item: StoredItem): Server {
  const field = fieldsOf(item, SERVER);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    name: field.string('name'),
    last_seen_at: field.stringOrNull('last_seen_at'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

/** A key's index item: where its credential is, so that deleting the server revokes it. */
function serverKeyFromItem(item: StoredItem) {
  const field = fieldsOf(item, ENTITY.SERVER_KEY);
  return { key: { pk: field.string('pk'), sk: field.string('sk') }, credentialHash: field.string('credential_hash') };
}

export async function createServer(storeId: number, input: ServerCreate): Promise<Server> {
  return createOnce(
    (serverId: number) => getServer(storeId, serverId),
    async (recordOnKey) => {
      const id = await nextId(storeId, SERVER);
      const now = nowIso();
      const server: Server = { id, store_id: storeId, name: input.name, last_seen_at: null, created_at: now, updated_at: now };
      await putNewCounted({ ...serverKey(storeId, id), entity: SERVER, ...server }, storeId, SERVER, recordOnKey(id));
      return server;
    },
  );
}

export const getServer = async (storeId: number, serverId: number) => getOne(serverKey(storeId, serverId), 'Server', serverFromItem);

/** A page of the store's game servers, in id order, and their total. */
export const serverPage = (storeId: number, page: number, limit: number) => countedPage(storeId, storeList(storeId, SERVER), page, limit, serverFromItem);

export const updateServer = async (storeId: number, serverId: number, patch: ServerPatch) => patchOne(serverKey(storeId, serverId), 'Server', patch, ['name'], serverFromItem);

/** The names of these servers of the store (a deleted one is absent). */
export async function serverNames(storeId: number, serverIds: readonly number[]): Promise<Map<number, string>> {
  const unique = [...new Set(serverIds)];
  const items = unique.length === 0 ? [] : await getMany(unique.map((id) => serverKey(storeId, id)));
  return new Map(items.flatMap((item) => (item ? [serverFromItem(item)] : [])).map((server) => [server.id, server.name] as const));
}

/** A claim by one of the server's keys: the server was seen now. A deleted server's key is no credential any more (401). */
export async function touchServer(storeId: number, serverId: number, now: string): Promise<void> {
  await writeGuarded([
    {
      item: update({
        Key: serverKey(storeId, serverId),
        UpdateExpression: 'SET last_seen_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now },
      }),
      onConditionFailed: () => unauthenticated('Unknown or revoked credential'),
    },
  ]);
}

/** A new `delivery` key for the server (404 when the server does not exist). */
export async function createServerKey(storeId: number, serverId: number): Promise<{ key: string; credential_id: number }> {
  const { key, credential_id, hash, puts } = await newDeliveryKey(storeId, serverId);
  await writeGuarded([
    {
      item: check({ Key: serverKey(storeId, serverId), ConditionExpression: 'attribute_exists(pk)' }),
      onConditionFailed: () => notFound('Server'),
    },
    ...puts,
    serverKeyEntry(storeId, serverId, credential_id, hash),
  ]);
  return { key, credential_id };
}

const serverKeyEntryKey = (storeId: number, serverId: number, credentialId: number) => ({ pk: storePk(storeId), sk: `${keyIndexPrefix(serverId)}${padId(credentialId)}` });

/** A delivery key's entry under its server (deleting the server revokes the keys it lists). */
export const serverKeyEntry = (storeId: number, serverId: number, credentialId: number, hash: string): GuardedWrite => ({
  item: put({ Item: { ...serverKeyEntryKey(storeId, serverId, credentialId), entity: ENTITY.SERVER_KEY, store_id: storeId, server_id: serverId, credential_hash: hash } }),
});

/** A rotated delivery key: the new key's entry under its server, the old one's gone. */
export const serverKeyRotation = (storeId: number, serverId: number, oldCredentialId: number, newCredentialId: number, newHash: string): GuardedWrite[] => [
  serverKeyEntry(storeId, serverId, newCredentialId, newHash),
  { item: remove({ Key: serverKeyEntryKey(storeId, serverId, oldCredentialId) }) },
];

/** Transactions hold 100 items: a key is its credential, its entry under the server and its entry in the store's list. */
const KEYS_PER_TRANSACTION = 33;

/**
 * Deletes the server unless a package's templates name it (409 naming them), then revokes its
 * keys. Its PENDING commands are the caller's to cancel (lib/flows/server.ts). A claim checks
 * the server exists, so a key left behind by a crash in between already opens nothing.
 */
export async function deleteServer(storeId: number, serverId: number): Promise<void> {
  await retrying(() =>
    writeGuarded([
      {
        item: remove({
          Key: serverKey(storeId, serverId),
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(ref_packages)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        onConditionFailed: (stored) => {
          if (!stored) return notFound('Server');
          const named = stored.ref_packages?.NS ?? [];
          const packages = named.map(Number).sort((a, b) => a - b);
          return conflict(`Server ${serverId} is named by the command templates of package(s) ${packages.join(', ')}; change those templates first`);
        },
      },
      countMove(storeId, SERVER, -1),
    ]),
  );
  const keys = (await queryAll({ pk: storePk(storeId), skPrefix: keyIndexPrefix(serverId) })).map(serverKeyFromItem);
  for (let start = 0; start < keys.length; start += KEYS_PER_TRANSACTION) {
    await writeGuarded(
      keys.slice(start, start + KEYS_PER_TRANSACTION).flatMap(({ key, credentialHash }) => [
        {
          // A key is revoked only as this store's (as every revoke, lib/db/credential.ts); gone already is fine.
          item: remove({
            Key: credentialKey(credentialHash),
            ConditionExpression: 'attribute_not_exists(pk) OR store_id = :store',
            ExpressionAttributeValues: { ':store': storeId },
          }),
          onConditionFailed: () => new Error(`server key index of store ${storeId} names another store's credential`),
        },
        { item: remove({ Key: key }) },
        { item: remove({ Key: credentialEntryKey(storeId, Number(key.sk.slice(keyIndexPrefix(serverId).length))) }) },
      ]),
    );
  }
}

/** Where a package names a server: `commands.<i>.servers.<j>`, for the 422. */
export type ServerMentions = ReadonlyMap<number, string>;

/** The servers a package's templates name, each with the input path of its first mention. */
export function serverMentions(commands: readonly { servers?: readonly number[] | null }[]): Map<number, string> {
  const mentions = new Map<number, string>();
  commands.forEach((template, i) => template.servers?.forEach((id, j) => mentions.has(id) || mentions.set(id, `commands.${i}.servers.${j}`)));
  return mentions;
}

/**
 * The writes that move package `packageId` from naming the servers `before` to naming `after`:
 * a newly named server must exist (422 on the field that named it); a server no longer named
 * forgets the package.
 */
export function serverReferenceWrites(storeId: number, packageId: number, before: ServerMentions, after: ServerMentions): GuardedWrite[] {
  const added = [...after].filter(([id]) => !before.has(id));
  const dropped = [...before.keys()].filter((id) => !after.has(id));
  const change = (serverId: number, action: 'ADD' | 'DELETE', condition: string) =>
    update({
      Key: serverKey(storeId, serverId),
      UpdateExpression: `${action} ref_packages :package`,
      ConditionExpression: condition,
      ExpressionAttributeValues: { ':package': new Set([packageId]) },
    });
  return [
    ...added.map(
      ([serverId, field]): GuardedWrite => ({
        item: change(serverId, 'ADD', 'attribute_exists(pk)'),
        onConditionFailed: () => unprocessable(`Server ${serverId} does not exist in this store`, field),
      }),
    ),
    // A server cannot be deleted while named, so it exists; the condition keeps DELETE from creating an item.
    ...dropped.map(
      (serverId): GuardedWrite => ({
        item: change(serverId, 'DELETE', 'attribute_exists(pk)'),
        onConditionFailed: () => new Error(`server ${serverId} named by package ${packageId} is missing`),
      }),
    ),
  ];
}
