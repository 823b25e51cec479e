import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { patchOne, getOne } from '#lib/db/entity.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { nowIso, storePk, stripKeys } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { missingReference, plural, referableKey, unreferencedCondition, type ReferableKind } from '#lib/db/references.ts';
import { rawNumber, retrying, StaleRead, transactGuarded, type GuardedWrite, type RawItem } from '#lib/db/transact.ts';
import { nextId } from '#lib/db/sequence.ts';
import { serverMentions, serverReferenceWrites } from '#lib/db/server.ts';
import { setExpression } from '#lib/db/update.ts';
import { conflict, HttpError, notFound, unprocessable } from '#lib/errors.ts';
import type { Package, PackageCreate, PackagePatch } from '#lib/schemas/package.ts';

/**
 * Packages.
 *
 * | access pattern                            | key / calls                                                              | calls    |
 * |-------------------------------------------|--------------------------------------------------------------------------|----------|
 * | create                                    | sequence ADD + TransactWrite(Put `STORE#<s> / PACKAGE#<id>` + counts)    | 2        |
 * | get                                       | GetItem `STORE#<s> / PACKAGE#<id>`                                       | 1        |
 * | list (id order)                           | Query `STORE#<s>`, sk begins_with `PACKAGE#`                             | 1 per MB |
 * | update without category_id / parent_id / commands | UpdateItem conditioned on existence                              | 1        |
 * | update sending category_id, parent_id or commands | GetItem + TransactWrite(Update conditioned on what was read, + counts) | 2      |
 * | delete                                    | GetItem + TransactWrite(Delete conditioned on `ref_count` 0 and on what  | 2        |
 * |                                           | was read, + the category's and parent's counts back)                     |          |
 * | set `image` to an upload                  | UpdateItem conditioned on existence, answering the replaced `image`      | 1        |
 *
 * A package's category and parent are counted references (lib/db/references.ts): the referred
 * item gets `ADD ref_count` in the same transaction, and a referred category or package cannot
 * be deleted (409). Besides `ref_count`, a category counts its packages (`package_count`) and a
 * package its variations (`variation_count`), so the 409 can say what still refers to it and a
 * package with variations can be refused as a variation itself. The servers its command templates
 * name hold the package's id the same way (lib/db/server.ts: 422 for a missing one, and a named
 * server cannot be deleted). Every package stores
 * `parent_id` (null when top-level), which lets the parent's condition check "is not a variation".
 */
export const PACKAGE = 'PACKAGE';
export const packageKey = (storeId: number, packageId: number) => referableKey(storeId, 'PACKAGE', packageId);

/**
 * A package's reference to its category or parent: `ref_count` (what blocks deletion) and the
 * per-kind counter move together. Adding a parent also requires that parent not be a variation.
 */
function countedReference(storeId: number, kind: ReferableKind, id: number, change: number, field: string): GuardedWrite {
  const counter = kind === 'CATEGORY' ? 'package_count' : 'variation_count';
  const mustBeTopLevel = kind === 'PACKAGE' && change > 0;
  return {
    item: {
      Update: {
        TableName: TABLE,
        Key: referableKey(storeId, kind, id),
        UpdateExpression: `ADD ref_count :change, ${counter} :change`,
        ConditionExpression: mustBeTopLevel ? 'attribute_exists(pk) AND attribute_type(parent_id, :null)' : 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':change': change, ...(mustBeTopLevel ? { ':null': 'NULL' } : {}) },
        ...(mustBeTopLevel ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
      },
    },
    onConditionFailed: (current) =>
      current
        ? unprocessable(`Package ${id} is itself a variation; a variation cannot be a parent`, field)
        : missingReference({ kind, id, field }),
  };
}

interface PackageLinks {
  category_id: number | null;
  parent_id: number | null;
}

function linkWrites(storeId: number, before: PackageLinks, after: PackageLinks): GuardedWrite[] {
  const writes: GuardedWrite[] = [];
  const move = (kind: ReferableKind, field: keyof PackageLinks) => {
    if (before[field] === after[field]) return;
    if (before[field] !== null) writes.push(countedReference(storeId, kind, before[field], -1, field));
    if (after[field] !== null) writes.push(countedReference(storeId, kind, after[field], 1, field));
  };
  move('CATEGORY', 'category_id');
  move('PACKAGE', 'parent_id');
  return writes;
}

export async function createPackage(storeId: number, input: PackageCreate): Promise<Package> {
  const id = await nextId(storeId, PACKAGE);
  const now = nowIso();
  const pkg: Package = {
    id,
    store_id: storeId,
    name: input.name,
    price: input.price,
    category_id: input.category_id,
    parent_id: input.parent_id,
    image: null,
    commands: input.commands,
    created_at: now,
    updated_at: now,
  };
  await retrying(() =>
    transactGuarded([
      {
        item: { Put: { TableName: TABLE, Item: { ...packageKey(storeId, id), entity: PACKAGE, ...pkg }, ConditionExpression: 'attribute_not_exists(pk)' } },
        onConditionFailed: () => new Error(`package id ${id} allocated twice in store ${storeId}`),
      },
      ...linkWrites(storeId, { category_id: null, parent_id: null }, input),
      ...serverReferenceWrites(storeId, id, new Map(), serverMentions(input.commands)),
    ]),
  );
  return pkg;
}

export const getPackage = (storeId: number, packageId: number) => getOne<Package>(packageKey(storeId, packageId), 'Package');

export async function listPackages(storeId: number): Promise<Package[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${PACKAGE}#` })).map((item) => stripKeys(item) as Package);
}

const PATCHABLE = ['name', 'price', 'category_id', 'parent_id', 'image', 'commands'] as const;

/** Condition that a reference still has the value we read (null is stored as a NULL attribute). */
function unchanged(name: keyof PackageLinks, value: number | null, values: Record<string, unknown>): string {
  if (value === null) {
    values[':null'] = 'NULL';
    return `attribute_type(${name}, :null)`;
  }
  values[`:was_${name}`] = value;
  return `${name} = :was_${name}`;
}

export async function updatePackage(storeId: number, packageId: number, patch: PackagePatch): Promise<Package> {
  if (patch.parent_id === packageId) throw unprocessable('A package cannot be its own parent', 'parent_id');
  if (patch.category_id === undefined && patch.parent_id === undefined && patch.commands === undefined) {
    return patchOne<Package>(packageKey(storeId, packageId), 'Package', patch, PATCHABLE);
  }
  return retrying(async () => {
    const current = await getPackage(storeId, packageId);
    const after: PackageLinks = {
      category_id: patch.category_id === undefined ? current.category_id : patch.category_id,
      parent_id: patch.parent_id === undefined ? current.parent_id : patch.parent_id,
    };
    const becomesVariation = current.parent_id === null && after.parent_id !== null;
    const variations = (current as Package & { variation_count?: number }).variation_count ?? 0;
    if (becomesVariation && variations > 0) {
      throw unprocessable(`Package ${packageId} has ${variations} variation(s); a package with variations cannot be a variation`, 'parent_id');
    }
    const updatedAt = nowIso();
    const update = setExpression({ ...patch, updated_at: updatedAt }, [...PATCHABLE, 'updated_at']);
    const values: Record<string, unknown> = { ...update.values, ':was_updated_at': current.updated_at };
    // The counts below come from the references just read; updated_at also keeps the returned package exact.
    const conditions = [
      'updated_at = :was_updated_at',
      unchanged('category_id', current.category_id, values),
      unchanged('parent_id', current.parent_id, values),
    ];
    if (becomesVariation) {
      conditions.push('(attribute_not_exists(variation_count) OR variation_count <= :zero)');
      values[':zero'] = 0;
    }
    await transactGuarded([
      {
        item: {
          Update: {
            TableName: TABLE,
            Key: packageKey(storeId, packageId),
            UpdateExpression: `SET ${update.sets.join(', ')}`,
            ConditionExpression: conditions.join(' AND '),
            ExpressionAttributeNames: update.names,
            ExpressionAttributeValues: values,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        onConditionFailed: (stored) => (stored ? new StaleRead() : notFound('Package')),
      },
      ...linkWrites(storeId, current, after),
      ...(patch.commands === undefined ? [] : serverReferenceWrites(storeId, packageId, serverMentions(current.commands), serverMentions(patch.commands))),
    ]);
    return { ...current, ...patch, updated_at: updatedAt };
  });
}

function stillReferred(packageId: number, stored: RawItem): HttpError {
  const variations = rawNumber(stored, 'variation_count');
  const others = rawNumber(stored, 'ref_count') - variations;
  const holders = [variations > 0 ? plural(variations, 'variation') : '', others > 0 ? `${plural(others, 'reference')} from promos or variables` : ''];
  return conflict(`Package ${packageId} is still referred to (${holders.filter(Boolean).join(' and ')}); remove those references first`);
}

/** The delete also gives back the package's own references (its category's and parent's counts). */
/** Deletes the package and answers it as it was (its image object is the caller's to release). */
export async function deletePackage(storeId: number, packageId: number): Promise<Package> {
  return retrying(async () => {
    const current = await getPackage(storeId, packageId);
    await transactGuarded([
      {
        item: {
          Delete: {
            TableName: TABLE,
            Key: packageKey(storeId, packageId),
            ConditionExpression: `${unreferencedCondition.ConditionExpression} AND updated_at = :was_updated_at`,
            ExpressionAttributeValues: { ...unreferencedCondition.ExpressionAttributeValues, ':was_updated_at': current.updated_at },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        onConditionFailed: (stored) => {
          if (!stored) return notFound('Package');
          return rawNumber(stored, 'ref_count') > 0 ? stillReferred(packageId, stored) : new StaleRead();
        },
      },
      ...linkWrites(storeId, current, { category_id: null, parent_id: null }),
      ...serverReferenceWrites(storeId, packageId, serverMentions(current.commands), new Map()),
    ]);
    return current;
  });
}

/**
 * Points the package at a newly uploaded image (lib/flows/image.ts) and answers the image it
 * had until now, read atomically with the write (UPDATED_OLD), so that of two racing uploads
 * each learns exactly the object it replaced. 404 when the package is missing.
 */
export async function setPackageImage(storeId: number, packageId: number, url: string | null): Promise<string | null> {
  try {
    const result = await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: packageKey(storeId, packageId),
        UpdateExpression: 'SET #image = :image, #updated_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#image': 'image', '#updated_at': 'updated_at' },
        ExpressionAttributeValues: { ':image': url, ':now': nowIso() },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return (result.Attributes?.image as string | null | undefined) ?? null;
  } catch (error) {
    if (isConditionalFailure(error)) throw notFound('Package');
    throw error;
  }
}
