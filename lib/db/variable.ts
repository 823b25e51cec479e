import { fieldsOf, getMany, getOne, newItemWrite, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, nowIso, storePk } from '#lib/db/keys.ts';
import { countedPage, countMove, storeList } from '#lib/db/list-count.ts';
import { queryAll } from '#lib/db/query.ts';
import { storeWideWrites } from '#lib/db/cart-index.ts';
import { referenceWrites } from '#lib/db/references.ts';
import { nextId } from '#lib/db/sequence.ts';
import { put, putNewItem, remove, retrying, StaleRead, writeGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { conflict } from '#lib/errors.ts';
import type { Reference } from '#lib/schemas/common.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { VARIABLE_TYPES, type StoredOption, type Variable } from '#lib/schemas/variable.ts';

/**
 * Checkout variables.
 *
 * | access pattern  | key                                                                        | calls    |
 * |-----------------|----------------------------------------------------------------------------|----------|
 * | create          | sequence ADD + TransactWrite: Put `STORE#<s> / VARIABLE#<id>`, Put name     | 2        |
 * |                 | sentinel `STORE#<s> / VARNAME#<lower name>`, `ADD ref_count` per package    |          |
 * | get             | GetItem `STORE#<s> / VARIABLE#<id>`                                         | 1        |
 * | update          | GetItem + PutItem conditioned on the `revision` read; a TransactWrite       | 2        |
 * |                 | instead when the name sentinel moves or package references change          |          |
 * | delete          | GetItem + TransactWrite: Delete item and sentinel, `ADD ref_count -1` each  | 2        |
 * | list (id order) | Query `STORE#<s>`, sk begins_with `VARIABLE#`                                | 1 per MB |
 *
 * Names are unique per store ignoring case: `{Nick}` and `{nick}` in one command template would
 * be a trap. `applies_to` is a counted reference (lib/db/references.ts), so a package that a
 * variable names cannot be deleted (409 from the package module).
 *
 * Options live inside the variable item, deactivated ones included (orders may refer to them;
 * `active: false` hides them from responses); ids come from a per-variable counter kept in the
 * item, so allocating them costs no call. Which options a write leaves, and whether a `regex`
 * may be stored, are the variable rules' (lib/domain/variable.ts), applied by
 * lib/flows/variable.ts before it calls the writes below.
 */
const VARIABLE = ENTITY.VARIABLE;
export const variableKey = (storeId: number, variableId: number) => ({ pk: storePk(storeId), sk: entitySk(VARIABLE, variableId) });
/** The name sentinel: it exists exactly while a variable of the store has this name (any case). */
export const variableNameKey = (storeId: number, name: string) => ({ pk: storePk(storeId), sk: `${ENTITY.VARIABLE_NAME}#${name.toLowerCase()}` });

/** A variable as stored: every option it ever had, the counter of option ids, the revision writes condition on. */
export type VariableItem = Omit<Variable, 'options' | 'bracket_display' | 'display'> & {
  name_lower: string;
  options: StoredOption[];
  next_option_id: number;
  revision: number;
};

/** Items written before the option counter existed go on after their highest option id. */
export function variableFromItem(item: StoredItem): VariableItem {
  const field = fieldsOf(item, VARIABLE);
  const name = field.string('name');
  const options = field.objects('options', (option) => ({
    id: option.number('id'),
    name: option.string('name'),
    value: option.string('value'),
    price: option.numberOrNull('price'),
    active: option.boolean('active'),
  }));
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    name,
    description: field.string('description'),
    type: field.oneOf('type', VARIABLE_TYPES),
    required: field.boolean('required'),
    regex: field.stringOrNull('regex'),
    applies_to: item.applies_to == null ? null : field.numbers('applies_to'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
    name_lower: field.string('name_lower', name.toLowerCase()),
    options,
    next_option_id: field.number('next_option_id', Math.max(0, ...options.map((option) => option.id)) + 1),
    revision: field.number('revision'),
  };
}

export function variableResponse(item: VariableItem): Variable {
  const variable: Variable = {
    id: item.id,
    store_id: item.store_id,
    name: item.name,
    description: item.description,
    type: item.type,
    required: item.required,
    regex: item.regex,
    applies_to: item.applies_to,
    bracket_display: `{${item.name}}`,
    display: item.name,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
  if (item.type === 'SELECT') {
    variable.options = item.options.filter((option) => option.active).map(({ id, name, value, price }) => ({ id, name, value, price }));
  }
  return variable;
}

const references = (appliesTo: readonly number[] | null): Reference[] => (appliesTo ?? []).map((id, index) => ({ kind: ENTITY.PACKAGE, id, field: `applies_to.${index}` }));

const nameInUse = () => conflict('A variable with this name already exists in this store', 'name');

function claimName(storeId: number, name: string, variableId: number): GuardedWrite {
  return { item: putNewItem({ ...variableNameKey(storeId, name), entity: ENTITY.VARIABLE_NAME, store_id: storeId, variable_id: variableId }), onConditionFailed: nameInUse };
}

/** The writes of a variable's package references and of where carts find it (lib/db/cart-index.ts), from `before` to `after` (null: none). */
function placementWrites(storeId: number, variableId: number, before: VariableItem | null, after: VariableItem | null): GuardedWrite[] {
  return [
    ...referenceWrites(storeId, before ? references(before.applies_to) : [], after ? references(after.applies_to) : [], { set: 'variable_ids', id: variableId }),
    ...storeWideWrites(storeId, 'variable_ids', variableId, before !== null && before.applies_to === null, after !== null && after.applies_to === null),
  ];
}

const variableItem = (item: VariableItem) => ({ ...variableKey(item.store_id, item.id), entity: VARIABLE, ...item });

/** The fields of a new variable, judged by the variable rules; ids, revision and times are added here. */
export type NewVariable = Omit<VariableItem, 'id' | 'store_id' | 'name_lower' | 'revision' | 'created_at' | 'updated_at'>;

export async function insertVariable(storeId: number, fields: NewVariable, recordOnKey: (variableId: number) => GuardedWrite[]): Promise<Variable> {
  const id = await nextId(storeId, VARIABLE);
  const now = nowIso();
  const item: VariableItem = { id, store_id: storeId, ...fields, name_lower: fields.name.toLowerCase(), revision: 0, created_at: now, updated_at: now };
  await retrying(() =>
    writeGuarded([
      newItemWrite(variableItem(item)),
      claimName(storeId, item.name, id),
      ...placementWrites(storeId, id, null, item),
      countMove(storeId, VARIABLE, 1),
      ...recordOnKey(id),
    ]),
  );
  return variableResponse(item);
}

export const getVariableItem = (storeId: number, variableId: number) => getOne(variableKey(storeId, variableId), 'Variable', variableFromItem);

export async function getVariable(storeId: number, variableId: number): Promise<Variable> {
  return variableResponse(await getVariableItem(storeId, variableId));
}

export async function listVariables(storeId: number): Promise<Variable[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${VARIABLE}#` })).map((item) => variableResponse(variableFromItem(item)));
}

/** Variables by id (one BatchGetItem per 100); ids whose variable is gone are left out. */
export async function getVariablesByIds(storeId: number, variableIds: readonly number[]): Promise<Variable[]> {
  const items = await getMany(
    variableIds.map((id) => variableKey(storeId, id)),
    { consistent: false },
  );
  return items.flatMap((item) => (item ? [variableResponse(variableFromItem(item))] : []));
}

/** A page of the store's variables, in id order, and their total. */
export const variablePage = (storeId: number, page: number, limit: number) =>
  countedPage(storeId, storeList(storeId, VARIABLE), page, limit, (item) => variableResponse(variableFromItem(item)));

/**
 * Rewrites the variable read as `current` with `merged` (judged by the variable rules), moving the
 * name sentinel and the package references when they changed; conditioned on the revision read
 * (StaleRead otherwise: the caller reads again).
 */
export async function writeVariable(storeId: number, current: VariableItem, merged: Omit<VariableItem, 'name_lower' | 'revision' | 'updated_at'>): Promise<Variable> {
  const variableId = current.id;
  const written: VariableItem = { ...merged, name_lower: merged.name.toLowerCase(), revision: current.revision + 1, updated_at: nowIso() };
  // The whole item is rewritten: every field was judged by the variable rules or derived here, and only this module writes it.
  const rewrite: GuardedWrite = {
    item: put({
      Item: variableItem(written),
      ConditionExpression: '#revision = :revision',
      ExpressionAttributeNames: { '#revision': 'revision' },
      ExpressionAttributeValues: { ':revision': current.revision },
    }),
    // Changed or deleted since the read: the next round reads it again (and answers 404 if it is gone).
    onConditionFailed: () => new StaleRead(),
  };
  const related: GuardedWrite[] = [
    ...(written.name_lower !== current.name_lower
      ? [{ item: remove({ Key: variableNameKey(storeId, current.name_lower) }), onConditionFailed: () => new StaleRead() }, claimName(storeId, written.name, variableId)]
      : []),
    ...placementWrites(storeId, variableId, current, written),
  ];
  // Alone, a plain PutItem; with the sentinel or references, one transaction.
  await writeGuarded([rewrite, ...related]);
  return variableResponse(written);
}

export function deleteVariable(storeId: number, variableId: number): Promise<void> {
  const key = variableKey(storeId, variableId);
  return retrying(async () => {
    const current = await getOne(key, 'Variable', variableFromItem);
    await writeGuarded([
      {
        // The name and references to release are the ones read.
        item: remove({
          Key: key,
          ConditionExpression: '#revision = :revision',
          ExpressionAttributeNames: { '#revision': 'revision' },
          ExpressionAttributeValues: { ':revision': current.revision },
        }),
        onConditionFailed: () => new StaleRead(),
      },
      { item: remove({ Key: variableNameKey(storeId, current.name_lower) }), onConditionFailed: () => new StaleRead() },
      ...placementWrites(storeId, variableId, current, null),
      countMove(storeId, VARIABLE, -1),
    ]);
  });
}
