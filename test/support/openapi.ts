/**
 * The document with every `$ref` to a component schema replaced by that schema, for tests that
 * read a body's or an answer's rules directly (the fuzz test draws its values from them).
 */
export function dereferenced<T>(document: T): T {
  const schemas = (document as { components: { schemas: Record<string, unknown> } }).components.schemas;
  const walk = (node: unknown, seen: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, seen));
    if (!node || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      // A schema that contains itself stays a reference below its first appearance.
      return seen.includes(name) ? node : walk(schemas[name], [...seen, name]);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value, seen)]));
  };
  return walk(document, []) as T;
}
