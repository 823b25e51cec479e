import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { getOne } from '#lib/db/entity.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { entitySk, nowIso, storePk, stripKeys } from '#lib/db/keys.ts';
import { referenceWrites } from '#lib/db/references.ts';
import { retrying, StaleRead, transactGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { queryAll } from '#lib/db/query.ts';
import type { Reference } from '#lib/schemas/common.ts';
import { nextId } from '#lib/db/sequence.ts';
import { conflict, unprocessable } from '#lib/errors.ts';
import type { Variable, VariableCreate, VariableOptionInput, VariablePatch, VariableType } from '#lib/schemas/variable.ts';

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
 * `active: false` hides them from responses). They are matched by exact name; ids come from a
 * per-variable counter kept in the item, so allocating them costs no call. A type other than
 * SELECT keeps no active option: changing a SELECT variable to another type deactivates them all,
 * and submitting their names again later reactivates them with their old ids.
 */
const VARIABLE = 'VARIABLE';
/** Deactivated options accumulate; this keeps the item far below DynamoDB's 400 KB. */
export const STORED_OPTIONS_MAX = 500;

export const variableKey = (storeId: number, variableId: number) => ({ pk: storePk(storeId), sk: entitySk(VARIABLE, variableId) });
const nameKey = (storeId: number, name: string) => ({ pk: storePk(storeId), sk: `VARNAME#${name.toLowerCase()}` });

export interface StoredOption {
  id: number;
  name: string;
  value: string;
  price: number | null;
  active: boolean;
}

type VariableItem = Omit<Variable, 'options' | 'bracket_display' | 'display'> & {
  name_lower: string;
  options: StoredOption[];
  next_option_id: number;
  revision: number;
};

/**
 * The stored options after a write. `submitted` undefined keeps them as they are (a PATCH
 * without `options`). Submitted options come first, in submission order (the order buyers see);
 * the deactivated ones follow.
 */
export function resolveOptions(
  stored: readonly StoredOption[],
  submitted: readonly VariableOptionInput[] | undefined,
  type: VariableType,
  nextOptionId: number,
): { options: StoredOption[]; nextOptionId: number } {
  if (type !== 'SELECT') {
    if (submitted) throw unprocessable('options are only for SELECT variables', 'options');
    return { options: stored.map((option) => ({ ...option, active: false })), nextOptionId };
  }
  if (!submitted) {
    if (stored.filter((option) => option.active).length < 2) {
      throw unprocessable('A SELECT variable needs options: send at least 2', 'options');
    }
    return { options: [...stored], nextOptionId };
  }
  const byName = new Map(stored.map((option) => [option.name, option]));
  let next = nextOptionId;
  const active = submitted.map((input) => ({
    id: byName.get(input.name)?.id ?? next++,
    name: input.name,
    value: input.value,
    price: input.price ?? null,
    active: true,
  }));
  const submittedNames = new Set(submitted.map((input) => input.name));
  const deactivated = stored.filter((option) => !submittedNames.has(option.name)).map((option) => ({ ...option, active: false }));
  const options = [...active, ...deactivated];
  if (options.length > STORED_OPTIONS_MAX) {
    throw unprocessable(`A variable keeps at most ${STORED_OPTIONS_MAX} options, deactivated ones included; reuse old option names`, 'options');
  }
  return { options, nextOptionId: next };
}

export function toVariable(item: VariableItem): Variable {
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

const references = (appliesTo: readonly number[] | null): Reference[] =>
  (appliesTo ?? []).map((id, index) => ({ kind: 'PACKAGE', id, field: `applies_to.${index}` }));

const nameInUse = () => conflict('A variable with this name already exists in this store', 'name');

function claimName(storeId: number, name: string, variableId: number): GuardedWrite {
  return {
    item: {
      Put: {
        TableName: TABLE,
        Item: { ...nameKey(storeId, name), entity: 'VARNAME', store_id: storeId, variable_id: variableId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: nameInUse,
  };
}

const storedItem = (storeId: number, item: VariableItem) => ({ ...variableKey(storeId, item.id), entity: VARIABLE, ...item });

export async function createVariable(storeId: number, input: VariableCreate): Promise<Variable> {
  const { options, nextOptionId } = resolveOptions([], input.options, input.type, 1);
  const id = await nextId(storeId, VARIABLE);
  const now = nowIso();
  const item: VariableItem = {
    id,
    store_id: storeId,
    name: input.name,
    name_lower: input.name.toLowerCase(),
    description: input.description,
    type: input.type,
    required: input.required ?? false,
    regex: input.regex ?? null,
    applies_to: input.applies_to ?? null,
    options,
    next_option_id: nextOptionId,
    revision: 0,
    created_at: now,
    updated_at: now,
  };
  await retrying(() =>
    transactGuarded([
      {
        item: { Put: { TableName: TABLE, Item: storedItem(storeId, item), ConditionExpression: 'attribute_not_exists(pk)' } },
        onConditionFailed: () => new Error(`variable id ${id} allocated twice in store ${storeId}`),
      },
      claimName(storeId, item.name, id),
      ...referenceWrites(storeId, [], references(item.applies_to)),
    ]),
  );
  return toVariable(item);
}

export async function getVariable(storeId: number, variableId: number): Promise<Variable> {
  return toVariable(await getOne<VariableItem>(variableKey(storeId, variableId), 'Variable'));
}

export async function listVariables(storeId: number): Promise<Variable[]> {
  return (await queryAll<VariableItem>({ pk: storePk(storeId), skPrefix: `${VARIABLE}#` })).map((item) => toVariable(stripKeys(item) as VariableItem));
}

const PATCHABLE = ['name', 'description', 'type', 'required', 'regex', 'applies_to'] as const;

export function updateVariable(storeId: number, variableId: number, patch: VariablePatch): Promise<Variable> {
  return retrying(async () => {
    const current = await getOne<VariableItem>(variableKey(storeId, variableId), 'Variable');
    const merged: VariableItem = { ...current };
    for (const name of PATCHABLE) if (patch[name] !== undefined) Object.assign(merged, { [name]: patch[name] });
    const { options, nextOptionId } = resolveOptions(current.options, patch.options, merged.type, current.next_option_id);
    Object.assign(merged, {
      name_lower: merged.name.toLowerCase(),
      options,
      next_option_id: nextOptionId,
      revision: current.revision + 1,
      updated_at: nowIso(),
    });

    // The whole item is rewritten: every field was validated or derived above, and only this module writes it.
    const put = {
      TableName: TABLE,
      Item: storedItem(storeId, merged),
      ConditionExpression: '#revision = :revision',
      ExpressionAttributeNames: { '#revision': 'revision' },
      ExpressionAttributeValues: { ':revision': current.revision },
    };
    const related: GuardedWrite[] = [
      ...(merged.name_lower !== current.name_lower
        ? [
            { item: { Delete: { TableName: TABLE, Key: nameKey(storeId, current.name_lower) } }, onConditionFailed: () => new StaleRead() },
            claimName(storeId, merged.name, variableId),
          ]
        : []),
      ...(patch.applies_to !== undefined ? referenceWrites(storeId, references(current.applies_to), references(merged.applies_to)) : []),
    ];
    if (related.length === 0) {
      try {
        await db.send(new PutCommand(put));
      } catch (error) {
        // Changed or deleted since the read: the next round reads it again (and answers 404 if it is gone).
        if (isConditionalFailure(error)) throw new StaleRead();
        throw error;
      }
    } else {
      await transactGuarded([{ item: { Put: put }, onConditionFailed: () => new StaleRead() }, ...related]);
    }
    return toVariable(merged);
  });
}

export function deleteVariable(storeId: number, variableId: number): Promise<void> {
  const key = variableKey(storeId, variableId);
  return retrying(async () => {
    const current = await getOne<VariableItem>(key, 'Variable');
    await transactGuarded([
      {
        // The name and references to release are the ones read.
        item: {
          Delete: {
            TableName: TABLE,
            Key: key,
            ConditionExpression: '#revision = :revision',
            ExpressionAttributeNames: { '#revision': 'revision' },
            ExpressionAttributeValues: { ':revision': current.revision },
          },
        },
        onConditionFailed: () => new StaleRead(),
      },
      { item: { Delete: { TableName: TABLE, Key: nameKey(storeId, current.name_lower) } }, onConditionFailed: () => new StaleRead() },
      ...referenceWrites(storeId, references(current.applies_to), []),
    ]);
  });
}
