/**
 * Builds a SET expression from a validated patch. Only names listed in `allowed` are written,
 * so a body key can never reach an UpdateExpression on its own. Nested objects given in
 * `nested` are updated field by field (`SET #affiliate.#percent_commission = ...`).
 */
export interface UpdateParts {
  sets: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
}

export function setExpression(patch: Record<string, unknown>, allowed: readonly string[], nested: readonly string[] = []): UpdateParts {
  const parts: UpdateParts = { sets: [], names: {}, values: {} };
  for (const name of allowed) {
    const value = patch[name];
    if (value === undefined) continue;
    if (nested.includes(name) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [child, childValue] of Object.entries(value)) {
        if (childValue === undefined) continue;
        parts.names[`#${name}`] = name;
        parts.names[`#${name}_${child}`] = child;
        parts.values[`:${name}_${child}`] = childValue;
        parts.sets.push(`#${name}.#${name}_${child} = :${name}_${child}`);
      }
      continue;
    }
    parts.names[`#${name}`] = name;
    parts.values[`:${name}`] = value;
    parts.sets.push(`#${name} = :${name}`);
  }
  return parts;
}
