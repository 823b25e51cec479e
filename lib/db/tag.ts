import { deleteOneCounted, fieldsOf, getMany, getOne, patchOne, patchWrite, putNewCounted, readItem, type StoredItem } from '#lib/db/entity.ts';
import { createOnce } from '#lib/db/idempotency.ts';
import { entitySk, nowIso, storePk } from '#lib/db/keys.ts';
import { countedPage, listCounterKey, storeList } from '#lib/db/list-count.ts';
import { queryAll } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { putNewItem, retrying, update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import type { Tag, TagCreate, TagPatch } from '#lib/schemas/tag.ts';

/**
 * Tags.
 *
 * | access pattern        | key                                               | calls    |
 * |-----------------------|---------------------------------------------------|----------|
 * | create                | sequence ADD + TransactWrite: Put `STORE#<s> / TAG#<id>`, count +1 (+ apply-all ids ADD when set, + the Idempotency-Key's record of it) | 2 |
 * | create again after a lost answer (same key) | GetItem of the tag recorded on the key (lib/db/idempotency.ts `createOnce`) | 1 |
 * | get                   | `STORE#<s> / TAG#<id>`                            | 1        |
 * | update (no `apply_to_all_packages`) | UpdateItem conditioned on existence   | 1        |
 * | update sending `apply_to_all_packages` | TransactWrite(Update conditioned on existence + apply-all ids ADD/DELETE) + GetItem | 2 |
 * | delete                | TransactWrite: Delete (conditional on existence), count -1, apply-all ids DELETE | 1 |
 * | a page (id order)     | counter `TAG` + Query with Limit (lib/db/list-count.ts) | 2 (+ skip) |
 * | apply-all ids (package reads) | GetItem `COUNT#<s> / TAG#APPLY_ALL`, consistent; or its key in the BatchGet of a package read (`applyAllKey`) | 1 (0) |
 * | the tags packages show | BatchGetItem of the ids they hold + the apply-all ids, per 100 (none when there are no ids) | 0-1 per 100 |
 * | first apply-all ids (data older than them) | Query `STORE#<s>`, sk begins_with `TAG#` + UpdateItem | 1 per MB + 1 |
 *
 * Packages hold tag ids (lib/db/package.ts) and every package read keeps those of them that still
 * exist (a BatchGet of exactly those ids), so deleting a tag is one transaction and the tag
 * disappears from every package at once. Tags applied to all packages are found through one item,
 * `COUNT#<s> / TAG#APPLY_ALL` (`ids`, a number set), moved in the same transaction as every write
 * that sets or clears the flag (create, update, delete): parallel writers serialize on it, so the
 * set holds every tag whose flag is set. A read still keeps only the tags whose stored flag is set,
 * so an id the set holds too long (a deleted tag, a race with the first derivation) costs a read
 * unit and shows nothing. Stores older than the item have no `derived` mark on it: their first
 * package read lists the tags once and ADDs the flagged ids (a union: never undoes a concurrent
 * writer's ADD) with `derived`. A new store starts it derived (`startApplyAll`). The item lives
 * in the counters' partition, so the read routes' grant for a first count covers that one write.
 */
const TAG = ENTITY.TAG;
export const tagKey = (storeId: number, tagId: number) => ({ pk: storePk(storeId), sk: entitySk(TAG, tagId) });
export const applyAllKey = (storeId: number) => listCounterKey(storeId, `${TAG}#APPLY_ALL`);

const tagItem = (tag: Tag) => ({ ...tagKey(tag.store_id, tag.id), entity: TAG, ...tag });

export function tagFromItem(item: StoredItem): Tag {
  const field = fieldsOf(item, TAG);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    name: field.string('name'),
    color: field.string('color'),
    apply_to_all_packages: field.boolean('apply_to_all_packages', false),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

/** A new store has no tags: its apply-all ids start derived (and empty). */
export function startApplyAll(storeId: number): GuardedWrite {
  return {
    item: putNewItem({ ...applyAllKey(storeId), derived: true, store_id: storeId }),
    onConditionFailed: () => new Error(`apply-all tags of store ${storeId} started twice`),
  };
}

/** The write that adds a tag to (or takes it off) the apply-all ids, to join the tag's own transaction. */
function applyAllMove(storeId: number, tagId: number, applied: boolean): GuardedWrite {
  return {
    item: update({
      Key: applyAllKey(storeId),
      UpdateExpression: `${applied ? 'ADD' : 'DELETE'} ids :id SET store_id = :store`,
      ExpressionAttributeValues: { ':id': new Set([tagId]), ':store': storeId },
    }),
  };
}

export async function createTag(storeId: number, input: TagCreate): Promise<Tag> {
  return createOnce(
    (tagId: number) => getTag(storeId, tagId),
    async (recordOnKey) => {
      const id = await nextId(storeId, TAG);
      const now = nowIso();
      const tag: Tag = {
        id,
        store_id: storeId,
        name: input.name,
        color: input.color,
        apply_to_all_packages: input.apply_to_all_packages ?? false,
        created_at: now,
        updated_at: now,
      };
      await putNewCounted(tagItem(tag), storeId, TAG, [...(tag.apply_to_all_packages ? [applyAllMove(storeId, id, true)] : []), ...recordOnKey(id)]);
      return tag;
    },
  );
}

/** A page of the store's tags, in id order, and their total. */
export const tagPage = (storeId: number, page: number, limit: number) => countedPage(storeId, storeList(storeId, TAG), page, limit, tagFromItem);

export const getTag = (storeId: number, tagId: number) => getOne(tagKey(storeId, tagId), 'Tag', tagFromItem);

/** Every tag of the store (1 Query per MB): only the first derivation of the apply-all ids reads them all. */
async function listTags(storeId: number): Promise<Tag[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${TAG}#` })).map(tagFromItem);
}

const PATCHABLE = ['name', 'color', 'apply_to_all_packages'] as const;

export async function updateTag(storeId: number, tagId: number, patch: TagPatch): Promise<Tag> {
  if (patch.apply_to_all_packages === undefined) return patchOne(tagKey(storeId, tagId), 'Tag', patch, PATCHABLE, tagFromItem);
  // The flag and the apply-all ids move together; a TransactWrite answers nothing, so the tag is read back.
  await retrying(() => writeGuarded([patchWrite(tagKey(storeId, tagId), 'Tag', patch, PATCHABLE), applyAllMove(storeId, tagId, patch.apply_to_all_packages === true)]));
  const item = await readItem(tagKey(storeId, tagId), true);
  // Deleted between the write and the read: as missing as before the write.
  if (!item) throw notFound('Tag');
  return tagFromItem(item);
}

export const deleteTag = (storeId: number, tagId: number) => deleteOneCounted(tagKey(storeId, tagId), 'Tag', storeId, TAG, [applyAllMove(storeId, tagId, false)]);

/**
 * The ids of the tags applied to all packages (a superset: see the header), one consistent
 * GetItem; for a store older than them, derived once from its tags.
 */
export async function applyAllTagIds(storeId: number): Promise<number[]> {
  return applyAllTagIdsOf(storeId, await readItem(applyAllKey(storeId), true));
}

/** The same from the apply-all item already read (consistently) by the caller, in a BatchGet with what it reads anyway. */
export async function applyAllTagIdsOf(storeId: number, item: StoredItem | undefined): Promise<number[]> {
  const held = item ? fieldsOf(item, TAG).numbers('ids') : [];
  if (item?.derived === true) return held;
  const flagged = (await listTags(storeId)).filter((tag) => tag.apply_to_all_packages).map((tag) => tag.id);
  // False when another reader derived them first: the same union.
  await writeIf(
    update({
      Key: applyAllKey(storeId),
      UpdateExpression: `SET derived = :true, store_id = :store${flagged.length > 0 ? ' ADD ids :ids' : ''}`,
      ConditionExpression: 'attribute_not_exists(derived)',
      ExpressionAttributeValues: { ':true': true, ':store': storeId, ...(flagged.length > 0 ? { ':ids': new Set(flagged) } : {}) },
    }),
  );
  return [...new Set([...held, ...flagged])];
}

/**
 * The store's tags among `ids` and `applyAll` that exist (one consistent BatchGet per 100 ids,
 * none without ids), in id order: with `tagsShownOn`, what packages holding any of `ids` show.
 */
export async function tagsFor(storeId: number, ids: readonly number[], applyAll: readonly number[]): Promise<Tag[]> {
  const wanted = [...new Set([...ids, ...applyAll])];
  if (wanted.length === 0) return [];
  const items = await getMany(wanted.map((id) => tagKey(storeId, id)));
  return items.flatMap((item) => (item ? [tagFromItem(item)] : [])).sort((a, b) => a.id - b.id);
}

/**
 * The tags a package shows, in id order: those of `ids` that still exist (a deleted tag's id
 * simply matches nothing; ids are never reused) and every tag applied to all packages, out of
 * `tags` as `tagsFor` read them.
 */
export function tagsShownOn(ids: readonly number[], tags: readonly Tag[]): Tag[] {
  const set = new Set(ids);
  return tags.filter((tag) => tag.apply_to_all_packages || set.has(tag.id));
}
