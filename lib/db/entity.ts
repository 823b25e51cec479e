import { nowIso } from '#lib/db/keys.ts';
import { countMove } from '#lib/db/list-count.ts';
import { getMany, readItem } from '#lib/db/query.ts';
import { putNewItem, remove, retrying, update, writeGuarded, writeReturning, type GuardedWrite } from '#lib/db/transact.ts';
import { setExpression } from '#lib/db/update.ts';
import { notFound } from '#lib/errors.ts';
import type { EntityName } from '#lib/schemas/entity.ts';

/**
 * What every entity module of lib/db is made of, and the single-item operations they share.
 *
 * One module per stored entity, and in it, in this order, one definition of each role, named so:
 *
 * | role                          | name                    | e.g.                               |
 * |-------------------------------|-------------------------|------------------------------------|
 * | its entity name               | `ENTITY.<NAME>` (lib/schemas/entity.ts), never a literal | `ENTITY.TAG` |
 * | key builders                  | `<x>Key(...)`           | `tagKey(storeId, tagId)`           |
 * | index attributes              | `<x>Indexes(record)`    | `packageIndexes(storeId, record)`  |
 * | record -> stored item         | `<x>Item(record)`       | `tagItem(tag)`: keys, entity, indexes, record |
 * | stored item -> record         | `<x>FromItem(item)`     | `tagFromItem(item)`                |
 * | record -> response            | `<x>Response(record)`   | `promoResponse(record)`            |
 * | access patterns               | verbs on the entity     | `getTag`, `tagPage`, `updateTag`   |
 *
 * A record is what the module's callers work with: the response's fields and the internal ones a
 * flow needs (revisions, counters). A response shape exists only where the two differ.
 *
 * `<x>FromItem` is the only way from a stored item to a record: it reads each attribute with
 * `fieldsOf` (a number is a number, ...), fills what items written before an attribute existed
 * lack (the default written next to the attribute's name) and throws `DamagedItem` (a 500) for
 * anything else, instead of casting the item to the record's type and hoping.
 *
 * Writes go through lib/db/transact.ts (`writeGuarded`), pages through lib/db/query.ts
 * (`queryPages`); both carry the table name, which no entity module writes.
 *
 * The single-item operations below are one DynamoDB call each, and each answers 404
 * (`<what> not found`) when the key does not exist: keys always include the caller's store, so
 * another store's item is exactly as absent as a missing one.
 */
export type Key = { pk: string; sk: string };
export type StoredItem = Record<string, unknown>;
/** Stored item -> record. */
export type ItemReader<T> = (item: StoredItem) => T;

/** A stored item that lacks what its reader needs: a bug or damaged data, never the caller's input (500). */
export class DamagedItem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DamagedItem';
  }
}

/**
 * Typed reads of one stored item's attributes, for `<x>FromItem`. Each takes the attribute's name
 * and, where items older than the attribute lack it, the value they stand for.
 */
export interface Fields {
  number(name: string, fallback?: number): number;
  string(name: string, fallback?: string): string;
  boolean(name: string, fallback?: boolean): boolean;
  /** Absent or null: null. */
  numberOrNull(name: string): number | null;
  stringOrNull(name: string): string | null;
  /** Absent: undefined (an optional attribute). */
  optionalNumber(name: string): number | undefined;
  optionalString(name: string): string | undefined;
  /** A list or a set (DynamoDB stores number and string sets), each element checked; absent = empty. */
  numbers(name: string): number[];
  strings(name: string): string[];
  /** One of a closed set of values (a status, a type). */
  oneOf<const T extends string>(name: string, values: readonly T[], fallback?: T): T;
  /** A nested object, its attributes read by `inner` with the same checks. */
  object<T>(name: string, inner: (fields: Fields) => T): T;
  /** A list of nested objects, each read by `inner`; absent = empty. */
  objects<T>(name: string, inner: (fields: Fields) => T): T[];
  /** A list kept as stored, its elements unchecked (JSON a caller gave, checked when it was written); absent = empty. */
  list(name: string): unknown[];
  /** A value kept as stored (JSON a caller gave, checked when it was written). */
  raw(name: string): unknown;
}

export function fieldsOf(item: StoredItem, entity: EntityName): Fields {
  const damaged = (name: string, expected: string) => new DamagedItem(`${entity} item ${String(item.pk)} / ${String(item.sk)}: ${name} is not ${expected}`);
  const read = <T>(name: string, is: (value: unknown) => value is T, expected: string, fallback?: T): T => {
    const value = item[name];
    if (is(value)) return value;
    if (value === undefined && fallback !== undefined) return fallback;
    throw damaged(name, expected);
  };
  const isNumber = (value: unknown): value is number => typeof value === 'number';
  const isString = (value: unknown): value is string => typeof value === 'string';
  const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
  const isObject = (value: unknown): value is StoredItem => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Set);
  const nullable = <T>(name: string, is: (value: unknown) => value is T, expected: string): T | null => {
    const value = item[name];
    if (value === undefined || value === null) return null;
    if (is(value)) return value;
    throw damaged(name, expected);
  };
  const many = <T>(name: string, is: (value: unknown) => value is T, expected: string): T[] => {
    const value = item[name];
    if (value === undefined || value === null) return [];
    const elements = value instanceof Set ? [...value] : Array.isArray(value) ? value : undefined;
    if (!elements?.every(is)) throw damaged(name, `a list of ${expected}`);
    return elements;
  };
  return {
    number: (name, fallback) => read(name, isNumber, 'a number', fallback),
    string: (name, fallback) => read(name, isString, 'a string', fallback),
    boolean: (name, fallback) => read(name, isBoolean, 'a boolean', fallback),
    numberOrNull: (name) => nullable(name, isNumber, 'a number'),
    stringOrNull: (name) => nullable(name, isString, 'a string'),
    optionalNumber: (name) => (item[name] === undefined ? undefined : read(name, isNumber, 'a number')),
    optionalString: (name) => (item[name] === undefined ? undefined : read(name, isString, 'a string')),
    numbers: (name) => many(name, isNumber, 'numbers'),
    strings: (name) => many(name, isString, 'strings'),
    oneOf: (name, values, fallback) =>
      read(name, (value): value is (typeof values)[number] => values.some((allowed) => allowed === value), `one of ${values.join(', ')}`, fallback),
    object: (name, inner) => inner(fieldsOf(read(name, isObject, 'an object'), entity)),
    objects: (name, inner) => many(name, isObject, 'objects').map((element) => inner(fieldsOf(element, entity))),
    list: (name) => many(name, (value): value is unknown => true, 'values'),
    raw: (name) => item[name],
  };
}

// The reads by key live with the Query helpers, below lib/db/list-count.ts, which this module's counted writes use (and whose sharded totals BatchGet).
export { getMany, readItem };

export async function getOne<T>(key: Key, what: string, read: ItemReader<T>): Promise<T> {
  const item = await readItem(key);
  if (!item) throw notFound(what);
  return read(item);
}

/** The guarded write of a new item: the condition guards against overwriting a key that already exists. */
export const newItemWrite = (item: StoredItem & Key): GuardedWrite => ({
  item: putNewItem(item),
  onConditionFailed: () => new Error(`${item.pk} / ${item.sk} written twice`),
});

/** Put a new item. */
export const putNew = (item: StoredItem & Key): Promise<void> => writeGuarded([newItemWrite(item)]);

/**
 * Put a new item of a counted list (lib/db/list-count.ts): the item and its list's count in one
 * TransactWrite, the same one call as a Put.
 */
export async function putNewCounted(item: StoredItem & Key, storeId: number, counter: string, alsoWrite: readonly GuardedWrite[] = []): Promise<void> {
  await retrying(() => writeGuarded([newItemWrite(item), countMove(storeId, counter, 1), ...alsoWrite]));
}

/** The guarded delete of an existing item (404 when it is not there). */
export const deleteWrite = (key: Key, what: string): GuardedWrite => ({
  item: remove({ Key: key, ConditionExpression: 'attribute_exists(pk)' }),
  onConditionFailed: () => notFound(what),
});

export const deleteOne = (key: Key, what: string): Promise<void> => writeGuarded([deleteWrite(key, what)]);

/** Delete an item of a counted list and take it off its list's count, in one TransactWrite (404 when it is not there). */
export async function deleteOneCounted(key: Key, what: string, storeId: number, counter: string, alsoWrite: readonly GuardedWrite[] = []): Promise<void> {
  await retrying(() => writeGuarded([deleteWrite(key, what), countMove(storeId, counter, -1), ...alsoWrite]));
}

/** A condition of its own for patchOne, and the error its failure stands for. */
export interface PatchCondition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
  failure: () => Error;
}

export interface PatchOptions {
  nested?: readonly string[];
  extraSets?: Record<string, unknown>;
  condition?: PatchCondition;
}

/**
 * The guarded UpdateItem that SETs the allowed fields of a validated patch (plus `updated_at`) on
 * an existing item. By default the item must exist (404 otherwise); a caller that read the item
 * first passes its own condition (e.g. the revision it read).
 */
export function patchWrite(key: Key, what: string, patch: Record<string, unknown>, allowed: readonly string[], options: PatchOptions = {}): GuardedWrite {
  const extraNames = Object.keys(options.extraSets ?? {});
  const parts = setExpression({ ...patch, ...options.extraSets, updated_at: nowIso() }, [...allowed, ...extraNames, 'updated_at'], options.nested);
  const condition = options.condition;
  return {
    item: update({
      Key: key,
      UpdateExpression: `SET ${parts.sets.join(', ')}`,
      ConditionExpression: condition?.expression ?? 'attribute_exists(pk)',
      ExpressionAttributeNames: { ...parts.names, ...condition?.names },
      ExpressionAttributeValues: { ...parts.values, ...condition?.values },
    }),
    onConditionFailed: condition ? condition.failure : () => notFound(what),
  };
}

/** `patchWrite` alone, answering the item as it now is. */
export async function patchOne<T>(key: Key, what: string, patch: Record<string, unknown>, allowed: readonly string[], read: ItemReader<T>, options: PatchOptions = {}): Promise<T> {
  return read((await writeReturning(patchWrite(key, what, patch, allowed, options), 'ALL_NEW')) ?? {});
}
