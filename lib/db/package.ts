import { cartIndexFromItem, cartIndexKey, referrerIds, type CartIndex } from '#lib/db/cart-index.ts';
import { fieldsOf, getMany, getOne, newItemWrite, patchOne, type StoredItem } from '#lib/db/entity.ts';
import { createOnce } from '#lib/db/idempotency.ts';
import { entitySk, nowIso, padId, storePk } from '#lib/db/keys.ts';
import {
  countMove,
  enabledInCategoryCounter,
  listCounterKey,
  listPageItems,
  listTotalOf,
  snapshotBump,
  STOREFRONT_CATEGORIES,
  storeList,
  type CountedList,
} from '#lib/db/list-count.ts';
import { missingReference, plural, referableKey, unreferencedCondition, type ReferableKind } from '#lib/db/references.ts';
import { rawNumber, remove, retrying, StaleRead, update, writeGuarded, writeReturning, type GuardedWrite, type RawItem } from '#lib/db/transact.ts';
import { nextId } from '#lib/db/sequence.ts';
import { serverMentions, serverReferenceWrites } from '#lib/db/server.ts';
import { applyAllKey, applyAllTagIds, applyAllTagIdsOf, tagsFor, tagsShownOn } from '#lib/db/tag.ts';
import { setExpression } from '#lib/db/update.ts';
import { conflict, HttpError, notFound, unprocessable, type ErrorDetail } from '#lib/errors.ts';
import { CATALOG_DEFAULTS, COMMAND_STAGES, type Package, type PackageCreate, type PackagePatch } from '#lib/schemas/package.ts';
import type { Tag } from '#lib/schemas/tag.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Packages.
 *
 * | access pattern                            | key / calls                                                              | calls    |
 * |-------------------------------------------|--------------------------------------------------------------------------|----------|
 * | create                                    | apply-all tag ids, then a BatchGet of those and the tags sent (none      | 3-4      |
 * |                                           | without any; 422 `tags.N`), sequence ADD, TransactWrite (Put             |          |
 * |                                           | `STORE#<s> / PACKAGE#<id>` + the category's and parent's counts, + the   |          |
 * |                                           | Idempotency-Key's record of it: lib/db/idempotency.ts `createOnce`)      |          |
 * | create again after a lost answer (same key)| get, of the package recorded on the key                                 | 1-2      |
 * | get                                       | one BatchGet: `STORE#<s> / PACKAGE#<id>` and the apply-all tag ids,      | 1-2      |
 * |                                           | then a BatchGet of the tags it shows (none without any)                  |          |
 * | a page (id order)                         | Query with Limit (lib/db/list-count.ts) + one BatchGet of the counter    | 2-3 (+ skip) |
 * |                                           | `PACKAGE` and the apply-all tag ids, in parallel, then a BatchGet of the |          |
 * |                                           | page's tag ids (per 100)                                                 |          |
 * | update of plain fields (name, price, ...) | UpdateItem conditioned on existence + apply-all tag ids, in parallel,    | 2-3      |
 * |                                           | then the BatchGet; sending `tags`: apply-all ids + BatchGet first (422)  |          |
 * | update sending category_id, parent_id,    | GetItem + TransactWrite(Update conditioned on what was read, + the       | 3-4      |
 * | enabled or commands                       | counts and server references that move), the tags read as above         |          |
 * | delete                                    | GetItem + TransactWrite(Delete conditioned on `ref_count` 0 and on what  | 2        |
 * |                                           | was read, + the category's and parent's counts back)                     |          |
 * | set `image` to an upload                  | UpdateItem conditioned on existence, answering the replaced `image`      | 1        |
 * | storefront: enabled packages (id order)   | Query gsi1 `STORE#<s>#STOREFRONT_PACKAGE`, gsi1sk `PACKAGE#<padded id>`, | 2 (+ skip) |
 * |                                           | with Limit + one BatchGet: counter `PACKAGE#ENABLED`, the apply-all tag  |          |
 * |                                           | ids and the cart index                                                   |          |
 * | storefront: enabled packages of a category| the same with Query gsi2 `STORE#<s>#CATEGORY#<c>#STOREFRONT_PACKAGE` and | 2 (+ skip) |
 * |                                           | counter `PACKAGE#ENABLED#CATEGORY#<c>`                                   |          |
 * | storefront: one enabled package           | one BatchGet with the apply-all tag ids and the cart index (a disabled   | 1        |
 * |                                           | one is answered as missing)                                              |          |
 *
 * A package's category and parent are counted references (lib/db/references.ts): the referred
 * item gets `ADD ref_count` in the same transaction, and a referred category or package cannot
 * be deleted (409). Besides `ref_count`, a category counts its packages (`package_count`) and a
 * package its variations (`variation_count`), so the 409 can say what still refers to it and a
 * package with variations can be refused as a variation itself. The servers its command templates
 * name hold the package's id the same way (lib/db/server.ts: 422 for a missing one, and a named
 * server cannot be deleted). Every package stores
 * `parent_id` (null when top-level), which lets the parent's condition check "is not a variation".
 *
 * The storefront reads only enabled packages: the gsi1 attributes (and gsi2 when the package has
 * a category) exist exactly while `enabled` is true, so the index is sparse and a disabled package
 * costs the storefront nothing. A category also counts its enabled packages
 * (`enabled_package_count`), moved in the package's own transaction by create, enable/disable,
 * a category change and delete: the storefront's category list reads the categories only.
 *
 * Tags: `tags` holds the ids the operator set, each checked when written (a BatchGet of the ids
 * sent: 422 `tags.N`). A deleted tag is never removed from the packages that carry it: every
 * read BatchGets the ids the package(s) hold with the apply-all tag ids (lib/db/tag.ts, read in
 * parallel with the package(s)) and shows those that exist, plus every tag applied to all
 * packages. Tag ids are never reused, so a deleted id simply disappears, and deleting a tag costs
 * one transaction however many packages carry it; a read costs the tags it shows, not the store's.
 *
 * Lists: the create and delete transactions move the count of the operator's list (`PACKAGE`) and
 * every placement change moves the counts of the storefront lists the package leaves or joins
 * (`PACKAGE#ENABLED`, `PACKAGE#ENABLED#CATEGORY#<c>`), so a page reads its counter and its items,
 * never the store's packages (lib/db/list-count.ts).
 *
 * `stock` is a plain Number while limited and NULL when unlimited (absent on packages written
 * before it existed: read as null), so an order can reserve units with `ADD stock :minus_n`
 * conditioned on `stock >= :n`, and give them back with `ADD stock :n`.
 * `expiry_days` is stored and validated only (timed packages, section 10).
 */
export const PACKAGE = ENTITY.PACKAGE;
export const packageKey = (storeId: number, packageId: number) => referableKey(storeId, ENTITY.PACKAGE, packageId);
const storefrontPk = (storeId: number) => `${storePk(storeId)}#STOREFRONT_PACKAGE`;
const storefrontCategoryPk = (storeId: number, categoryId: number) => `${storePk(storeId)}#CATEGORY#${padId(categoryId)}#STOREFRONT_PACKAGE`;

/** The package as stored: `tags` are the ids the operator set, deleted tags included. */
export type StoredPackage = Omit<Package, 'tags'> & { tags: number[]; variation_count?: number };

/** Packages written before a field existed read as CATALOG_DEFAULTS (and their command templates as the schema's defaults). */
export function packageFromItem(item: StoredItem): StoredPackage {
  const field = fieldsOf(item, PACKAGE);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    name: field.string('name'),
    price: field.number('price'),
    category_id: field.numberOrNull('category_id'),
    parent_id: field.numberOrNull('parent_id'),
    image: field.stringOrNull('image'),
    commands: field.objects('commands', (command) => ({
      command: command.string('command'),
      servers: command.raw('servers') == null ? null : command.numbers('servers'),
      stage: command.oneOf('stage', COMMAND_STAGES, 'APPROVED'),
      offline_execute: command.boolean('offline_execute'),
      delay_seconds: command.number('delay_seconds'),
    })),
    description: field.string('description', CATALOG_DEFAULTS.description),
    enabled: field.boolean('enabled', CATALOG_DEFAULTS.enabled),
    stock: field.numberOrNull('stock'),
    per_customer_limit: field.numberOrNull('per_customer_limit'),
    tags: field.numbers('tags'),
    expiry_days: field.numberOrNull('expiry_days'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
    ...(item.variation_count === undefined ? {} : { variation_count: field.number('variation_count') }),
  };
}

/** The package as stored, with its storefront index attributes. */
const packageItem = (pkg: StoredPackage) => ({ ...packageKey(pkg.store_id, pkg.id), entity: PACKAGE, ...storefrontIndex(pkg.store_id, pkg.id, pkg), ...pkg });

const present = (pkg: StoredPackage, storeTags: readonly Tag[]): Package => ({ ...pkg, tags: tagsShownOn(pkg.tags, storeTags).map((tag) => tag.id) });

function assertTagsExist(ids: readonly number[], storeTags: readonly Tag[]): void {
  const existing = new Set(storeTags.map((tag) => tag.id));
  const missing = ids.flatMap((id, index): ErrorDetail[] =>
    existing.has(id) ? [] : [{ message: `Tag ${id} does not exist in this store`, code: 'VALIDATION_FAILED', field: `tags.${index}` }],
  );
  if (missing.length > 0) throw new HttpError(422, missing);
}

/** What decides a package's counts and its storefront index entries. */
interface PackagePlacement {
  category_id: number | null;
  parent_id: number | null;
  enabled: boolean;
}
const UNPLACED: PackagePlacement = { category_id: null, parent_id: null, enabled: false };

const INDEX_ATTRIBUTES = ['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'] as const;

/** The storefront index attributes of a package so placed (none while disabled). */
function storefrontIndex(storeId: number, packageId: number, placement: PackagePlacement): Partial<Record<(typeof INDEX_ATTRIBUTES)[number], string>> {
  if (!placement.enabled) return {};
  const byCategory = placement.category_id === null ? {} : { gsi2pk: storefrontCategoryPk(storeId, placement.category_id), gsi2sk: entitySk(PACKAGE, packageId) };
  return { gsi1pk: storefrontPk(storeId), gsi1sk: entitySk(PACKAGE, packageId), ...byCategory };
}

/**
 * A package's reference to its category or parent: `ref_count` (what blocks deletion) and the
 * per-kind counter move together (a category's enabled count too). Adding a parent also
 * requires that parent not be a variation.
 */
function countedReference(storeId: number, kind: ReferableKind, id: number, counts: { change: number; enabledChange?: number }, field: string): GuardedWrite {
  const { change, enabledChange = 0 } = counts;
  const counter = kind === ENTITY.CATEGORY ? 'package_count' : 'variation_count';
  const mustBeTopLevel = kind === ENTITY.PACKAGE && change > 0;
  const enabledCount = enabledChange === 0 ? '' : ', enabled_package_count :enabled_change';
  return {
    item: update({
      Key: referableKey(storeId, kind, id),
      UpdateExpression: `ADD ref_count :change, ${counter} :change${enabledCount}`,
      ConditionExpression: mustBeTopLevel ? 'attribute_exists(pk) AND attribute_type(parent_id, :null)' : 'attribute_exists(pk)',
      ExpressionAttributeValues: {
        ':change': change,
        ...(enabledChange === 0 ? {} : { ':enabled_change': enabledChange }),
        ...(mustBeTopLevel ? { ':null': 'NULL' } : {}),
      },
      ...(mustBeTopLevel ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
    }),
    onConditionFailed: (current) => (current ? unprocessable(`Package ${id} is itself a variation; a variation cannot be a parent`, field) : missingReference({ kind, id, field })),
  };
}

/** The count updates that take a package from one placement to another (one write per item). */
function linkWrites(storeId: number, before: PackagePlacement, after: PackagePlacement): GuardedWrite[] {
  const writes: GuardedWrite[] = [];
  const enabledIn = (placement: PackagePlacement) => (placement.enabled ? 1 : 0);
  if (before.category_id === after.category_id) {
    const enabledChange = enabledIn(after) - enabledIn(before);
    if (after.category_id !== null && enabledChange !== 0) writes.push(countedReference(storeId, ENTITY.CATEGORY, after.category_id, { change: 0, enabledChange }, 'category_id'));
  } else {
    if (before.category_id !== null) writes.push(countedReference(storeId, ENTITY.CATEGORY, before.category_id, { change: -1, enabledChange: -enabledIn(before) }, 'category_id'));
    if (after.category_id !== null) writes.push(countedReference(storeId, ENTITY.CATEGORY, after.category_id, { change: 1, enabledChange: enabledIn(after) }, 'category_id'));
  }
  if (before.parent_id !== after.parent_id) {
    if (before.parent_id !== null) writes.push(countedReference(storeId, ENTITY.PACKAGE, before.parent_id, { change: -1 }, 'parent_id'));
    if (after.parent_id !== null) writes.push(countedReference(storeId, ENTITY.PACKAGE, after.parent_id, { change: 1 }, 'parent_id'));
  }
  // A category's enabled count moving may take it into or out of the storefront's categories.
  const movesEnabledCount =
    (before.enabled && before.category_id !== null) !== (after.enabled && after.category_id !== null) ||
    (before.enabled && after.enabled && before.category_id !== after.category_id);
  return [...writes, ...storefrontCountWrites(storeId, before, after), ...(movesEnabledCount ? [snapshotBump(storeId, STOREFRONT_CATEGORIES)] : [])];
}

/** The storefront lists a placement is in: every enabled package, and those of its category. */
function storefrontListsOf(storeId: number, placement: PackagePlacement): CountedList[] {
  if (!placement.enabled) return [];
  return [enabledPackageList(storeId), ...(placement.category_id === null ? [] : [enabledPackageList(storeId, placement.category_id)])];
}

/** The counts of the storefront lists a package leaves or joins (nothing for a list it stays in). */
function storefrontCountWrites(storeId: number, before: PackagePlacement, after: PackagePlacement): GuardedWrite[] {
  const deltas = new Map<string, number>();
  for (const list of storefrontListsOf(storeId, before)) deltas.set(list.counter, (deltas.get(list.counter) ?? 0) - 1);
  for (const list of storefrontListsOf(storeId, after)) deltas.set(list.counter, (deltas.get(list.counter) ?? 0) + 1);
  return [...deltas].filter(([, delta]) => delta !== 0).map(([counter, delta]) => countMove(storeId, counter, delta));
}

/**
 * The storefront's list of enabled packages (of one category), read from the sparse index; its
 * first count reads the table (consistently) for the items that carry that index's keys, which is
 * exactly what the index holds.
 */
function enabledPackageList(storeId: number, categoryId?: number): CountedList {
  const table = { pk: storePk(storeId), skPrefix: `${PACKAGE}#` };
  if (categoryId === undefined) {
    return {
      counter: `${PACKAGE}#ENABLED`,
      page: { index: 'gsi1', pk: storefrontPk(storeId), skPrefix: `${PACKAGE}#` },
      count: { ...table, filter: { FilterExpression: 'attribute_exists(gsi1pk)' } },
    };
  }
  return {
    counter: enabledInCategoryCounter(categoryId),
    page: { index: 'gsi2', pk: storefrontCategoryPk(storeId, categoryId), skPrefix: `${PACKAGE}#` },
    count: { ...table, filter: { FilterExpression: 'gsi2pk = :index_pk', ExpressionAttributeValues: { ':index_pk': storefrontCategoryPk(storeId, categoryId) } } },
  };
}

/** The tags that `ids` name and those applied to all packages (2 calls: the apply-all ids, then one BatchGet), checked: 422 `tags.N` for a missing one. */
async function sentTags(storeId: number, ids: readonly number[]): Promise<Tag[]> {
  const tags = await tagsFor(storeId, ids, await applyAllTagIds(storeId));
  assertTagsExist(ids, tags);
  return tags;
}

export async function createPackage(storeId: number, input: PackageCreate): Promise<Package> {
  return createOnce(
    (packageId: number) => getPackage(storeId, packageId),
    async (recordOnKey) => {
      const storeTags = await sentTags(storeId, input.tags);
      const id = await nextId(storeId, PACKAGE);
      const now = nowIso();
      const pkg: StoredPackage = {
        id,
        store_id: storeId,
        name: input.name,
        price: input.price,
        category_id: input.category_id,
        parent_id: input.parent_id,
        image: null,
        commands: input.commands,
        description: input.description,
        enabled: input.enabled,
        stock: input.stock,
        per_customer_limit: input.per_customer_limit,
        tags: input.tags,
        expiry_days: input.expiry_days,
        created_at: now,
        updated_at: now,
      };
      await retrying(() =>
        writeGuarded([
          newItemWrite(packageItem(pkg)),
          ...linkWrites(storeId, UNPLACED, pkg),
          ...serverReferenceWrites(storeId, id, new Map(), serverMentions(input.commands)),
          countMove(storeId, PACKAGE, 1),
          ...recordOnKey(id),
        ]),
      );
      return present(pkg, storeTags);
    },
  );
}

/** The package as stored (one GetItem, 404 when missing): enough to know it exists. */
export async function getStoredPackage(storeId: number, packageId: number): Promise<StoredPackage> {
  return getOne(packageKey(storeId, packageId), 'Package', packageFromItem);
}

/** The package and the apply-all tag ids in one consistent BatchGet, then the tags it shows. */
export async function getPackage(storeId: number, packageId: number): Promise<Package> {
  const [item, applyAllItem] = await getMany([packageKey(storeId, packageId), applyAllKey(storeId)]);
  if (!item) throw notFound('Package');
  const pkg = packageFromItem(item);
  return present(pkg, await tagsFor(storeId, pkg.tags, await applyAllTagIdsOf(storeId, applyAllItem)));
}

/**
 * A page of the store's packages, in id order, and their total: the page's Query and, in
 * parallel, one BatchGet of the list's counter and the apply-all tag ids; then the tags the page
 * shows.
 */
export async function packagePage(storeId: number, page: number, limit: number): Promise<{ total: number; data: Package[] }> {
  const list = storeList(storeId, PACKAGE);
  const [[counter, applyAllItem], data] = await Promise.all([
    getMany([listCounterKey(storeId, list.counter), applyAllKey(storeId)]),
    listPageItems(list, page, limit, packageFromItem),
  ]);
  const [total, applyAll] = await Promise.all([listTotalOf(storeId, list, counter), applyAllTagIdsOf(storeId, applyAllItem)]);
  const shown = await tagsFor(
    storeId,
    data.flatMap((pkg) => pkg.tags),
    applyAll,
  );
  return { total, data: data.map((pkg) => present(pkg, shown)) };
}

/** A package as the storefront shows it, with the ids of the variables that name it (lib/db/cart-index.ts): its fields come from those. */
export interface ShownPackage {
  pkg: StoredPackage;
  variableIds: number[];
}
const shownFromItem = (item: StoredItem): ShownPackage => ({ pkg: packageFromItem(item), variableIds: referrerIds(item, 'variable_ids') });

/**
 * A page of the enabled packages of the store, or of one category, in id order, from the sparse
 * storefront index, and their total, with what the storefront shows them with: the page's Query
 * and, in parallel, one consistent BatchGet of the list's counter, the apply-all tag ids and the
 * cart index (lib/db/cart-index.ts).
 */
export async function enabledPackagePage(
  storeId: number,
  categoryId: number | undefined,
  page: number,
  limit: number,
): Promise<{ total: number; data: ShownPackage[]; applyAll: number[]; index: CartIndex | null }> {
  const list = enabledPackageList(storeId, categoryId);
  const [[counter, applyAllItem, indexItem], data] = await Promise.all([
    getMany([listCounterKey(storeId, list.counter), applyAllKey(storeId), cartIndexKey(storeId)]),
    listPageItems(list, page, limit, shownFromItem),
  ]);
  const [total, applyAll] = await Promise.all([listTotalOf(storeId, list, counter), applyAllTagIdsOf(storeId, applyAllItem)]);
  return { total, data, applyAll, index: cartIndexFromItem(indexItem) };
}

/**
 * An enabled package (a disabled one is as missing as one that does not exist: 404), with what
 * the storefront shows it with: the apply-all tag ids and the cart index (lib/db/cart-index.ts),
 * all three in one consistent BatchGet.
 */
export async function getEnabledPackage(storeId: number, packageId: number): Promise<{ found: ShownPackage; applyAll: number[]; index: CartIndex | null }> {
  const [item, applyAllItem, indexItem] = await getMany([packageKey(storeId, packageId), applyAllKey(storeId), cartIndexKey(storeId)]);
  const found = item ? shownFromItem(item) : undefined;
  if (!found?.pkg.enabled) throw notFound('Package');
  return { found, applyAll: await applyAllTagIdsOf(storeId, applyAllItem), index: cartIndexFromItem(indexItem) };
}

const PATCHABLE = ['name', 'price', 'category_id', 'parent_id', 'image', 'commands', 'description', 'enabled', 'stock', 'per_customer_limit', 'tags', 'expiry_days'] as const;

/** Condition that a reference still has the value we read (null is stored as a NULL attribute). */
function unchanged(name: 'category_id' | 'parent_id', value: number | null, values: Record<string, unknown>): string {
  if (value === null) {
    values[':null'] = 'NULL';
    return `attribute_type(${name}, :null)`;
  }
  values[`:was_${name}`] = value;
  return `${name} = :was_${name}`;
}

export async function updatePackage(storeId: number, packageId: number, patch: PackagePatch): Promise<Package> {
  if (patch.parent_id === packageId) throw unprocessable('A package cannot be its own parent', 'parent_id');
  const checked = patch.tags && (await sentTags(storeId, patch.tags));
  // Commands move server references: they need the templates as they were, like a placement change.
  const movesPlacement = patch.category_id !== undefined || patch.parent_id !== undefined || patch.enabled !== undefined || patch.commands !== undefined;
  const write = movesPlacement ? updatePlacement(storeId, packageId, patch) : patchOne(packageKey(storeId, packageId), 'Package', patch, PATCHABLE, packageFromItem);
  // Tags sent were read (and checked) before the write; otherwise the apply-all ids are read alongside it.
  const [updated, applyAll] = await Promise.all([write, checked ? undefined : applyAllTagIds(storeId)]);
  return present(updated, checked || (await tagsFor(storeId, updated.tags, applyAll ?? [])));
}

/**
 * A change of category, parent, `enabled` or commands: read, then one transaction that moves the
 * counts, the server references and the storefront index entries, conditioned on what was read.
 */
function updatePlacement(storeId: number, packageId: number, patch: PackagePatch): Promise<StoredPackage> {
  return retrying(async () => {
    const current = await getStoredPackage(storeId, packageId);
    const after: PackagePlacement = {
      category_id: patch.category_id === undefined ? current.category_id : patch.category_id,
      parent_id: patch.parent_id === undefined ? current.parent_id : patch.parent_id,
      enabled: patch.enabled ?? current.enabled,
    };
    const becomesVariation = current.parent_id === null && after.parent_id !== null;
    const variations = current.variation_count ?? 0;
    if (becomesVariation && variations > 0) {
      throw unprocessable(`Package ${packageId} has ${variations} variation(s); a package with variations cannot be a variation`, 'parent_id');
    }
    const updatedAt = nowIso();
    const index = storefrontIndex(storeId, packageId, after);
    const parts = setExpression({ ...patch, ...index, updated_at: updatedAt }, [...PATCHABLE, ...INDEX_ATTRIBUTES, 'updated_at']);
    const removed = INDEX_ATTRIBUTES.filter((name) => index[name] === undefined);
    const values: Record<string, unknown> = { ...parts.values, ':was_updated_at': current.updated_at };
    // The counts below come from the placement just read; updated_at also keeps the returned package exact.
    const conditions = ['updated_at = :was_updated_at', unchanged('category_id', current.category_id, values), unchanged('parent_id', current.parent_id, values)];
    if (becomesVariation) {
      conditions.push('(attribute_not_exists(variation_count) OR variation_count <= :zero)');
      values[':zero'] = 0;
    }
    await writeGuarded([
      {
        item: update({
          Key: packageKey(storeId, packageId),
          UpdateExpression: `SET ${parts.sets.join(', ')}${removed.length > 0 ? ` REMOVE ${removed.join(', ')}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: parts.names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
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

/**
 * Deletes the package and answers it as it was (its image object is the caller's to release);
 * the same transaction gives back its category's and parent's counts.
 */
export async function deletePackage(storeId: number, packageId: number): Promise<StoredPackage> {
  return retrying(async () => {
    const current = await getStoredPackage(storeId, packageId);
    await writeGuarded([
      {
        item: remove({
          Key: packageKey(storeId, packageId),
          ConditionExpression: `${unreferencedCondition.ConditionExpression} AND updated_at = :was_updated_at`,
          ExpressionAttributeValues: { ...unreferencedCondition.ExpressionAttributeValues, ':was_updated_at': current.updated_at },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        onConditionFailed: (stored) => {
          if (!stored) return notFound('Package');
          return rawNumber(stored, 'ref_count') > 0 ? stillReferred(packageId, stored) : new StaleRead();
        },
      },
      ...linkWrites(storeId, current, UNPLACED),
      ...serverReferenceWrites(storeId, packageId, serverMentions(current.commands), new Map()),
      countMove(storeId, PACKAGE, -1),
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
  const old = await writeReturning(
    {
      item: update({
        Key: packageKey(storeId, packageId),
        UpdateExpression: 'SET #image = :image, #updated_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#image': 'image', '#updated_at': 'updated_at' },
        ExpressionAttributeValues: { ':image': url, ':now': nowIso() },
      }),
      onConditionFailed: () => notFound('Package'),
    },
    'UPDATED_OLD',
  );
  return old ? fieldsOf(old, PACKAGE).stringOrNull('image') : null;
}
