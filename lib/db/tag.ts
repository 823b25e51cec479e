import { deleteOneCounted, getOne, patchOne, putNewCounted } from '#lib/db/entity.ts';
import { entitySk, nowIso, stripKeys, storePk } from '#lib/db/keys.ts';
import { countedPage, storeList } from '#lib/db/list-count.ts';
import { queryAll } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import type { Tag, TagCreate, TagPatch } from '#lib/schemas/tag.ts';

/**
 * Tags.
 *
 * | access pattern        | key                                               | calls    |
 * |-----------------------|---------------------------------------------------|----------|
 * | create                | sequence ADD + TransactWrite: Put `STORE#<s> / TAG#<id>`, count +1 | 2 |
 * | get, update           | `STORE#<s> / TAG#<id>` (conditional on existence) | 1        |
 * | delete                | TransactWrite: Delete (conditional on existence), count -1 | 1 |
 * | every tag (package reads) | Query `STORE#<s>`, sk begins_with `TAG#`      | 1 per MB |
 * | a page (id order)     | counter `TAG` + Query with Limit (lib/db/list-count.ts) | 2 (+ skip) |
 *
 * Packages hold tag ids (lib/db/package.ts) and every package read filters them against this
 * list, so deleting a tag is one DeleteItem and the tag disappears from every package at once.
 */
const TAG = 'TAG';
export const tagKey = (storeId: number, tagId: number) => ({ pk: storePk(storeId), sk: entitySk(TAG, tagId) });

export async function createTag(storeId: number, input: TagCreate): Promise<Tag> {
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
  await putNewCounted(tagKey(storeId, id), TAG, tag, storeId, TAG);
  return tag;
}

/** A page of the store's tags, in id order, and their total. */
export const tagPage = (storeId: number, page: number, limit: number) => countedPage<Tag>(storeId, storeList(storeId, TAG), page, limit);

export const getTag = (storeId: number, tagId: number) => getOne<Tag>(tagKey(storeId, tagId), 'Tag');

export async function listTags(storeId: number): Promise<Tag[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${TAG}#` })).map((item) => stripKeys(item) as Tag);
}

export const updateTag = (storeId: number, tagId: number, patch: TagPatch) =>
  patchOne<Tag>(tagKey(storeId, tagId), 'Tag', patch, ['name', 'color', 'apply_to_all_packages']);

/**
 * The tags a package shows, in id order: those of `ids` that still exist (a deleted tag's id
 * simply matches nothing; ids are never reused) and every tag applied to all packages.
 */
export function tagsShownOn(ids: readonly number[], storeTags: readonly Tag[]): Tag[] {
  const set = new Set(ids);
  return storeTags.filter((tag) => tag.apply_to_all_packages || set.has(tag.id));
}

export const deleteTag = (storeId: number, tagId: number) => deleteOneCounted(tagKey(storeId, tagId), 'Tag', storeId, TAG);
