import { createOnce } from '#lib/db/idempotency.ts';
import { getVariable, getVariableItem, insertVariable, writeVariable } from '#lib/db/variable.ts';
import { retrying } from '#lib/db/transact.ts';
import { assertLinearRegex, resolveOptions } from '#lib/domain/variable.ts';
import type { Variable, VariableCreate, VariablePatch } from '#lib/schemas/variable.ts';

/**
 * Checkout variables as the operator writes them: the variable rules (lib/domain/variable.ts)
 * decide the options and refuse a `regex` the linear-time engine cannot run, before any write.
 * Calls: creation 2 (sequence + TransactWrite), update 2 (GetItem + PutItem or TransactWrite).
 */
export async function createVariable(storeId: number, input: VariableCreate): Promise<Variable> {
  // Its retry after a lost answer answers the variable created (1 GetItem), not 409 for the name it now holds.
  return createOnce(
    (variableId: number) => getVariable(storeId, variableId),
    async (recordOnKey) => {
      const regex = input.regex ?? null;
      assertLinearRegex(regex);
      const { options, nextOptionId } = resolveOptions([], input.options, input.type, 1);
      const fields = {
        name: input.name,
        description: input.description,
        type: input.type,
        required: input.required ?? false,
        regex,
        applies_to: input.applies_to ?? null,
        options,
        next_option_id: nextOptionId,
      };
      return insertVariable(storeId, fields, recordOnKey);
    },
  );
}

/** The merged variable is judged as a creation would be; a write that finds it changed reads again. */
export function updateVariable(storeId: number, variableId: number, patch: VariablePatch): Promise<Variable> {
  return retrying(async () => {
    const current = await getVariableItem(storeId, variableId);
    const { options: submitted, ...fields } = patch;
    const merged = { ...current };
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) Object.assign(merged, { [name]: value });
    // Only a regex sent now is judged: a stored one the engine refuses is refused to buyers instead (lib/domain/variable.ts).
    assertLinearRegex(fields.regex ?? null);
    const { options, nextOptionId } = resolveOptions(current.options, submitted, merged.type, current.next_option_id);
    return writeVariable(storeId, current, { ...merged, options, next_option_id: nextOptionId });
  });
}
