/**
 * Module loader hook of `npm start`'s reload (infra/local/server.ts): a module imported under
 * `?generation=N` passes the same query on to the functions/ and lib/ modules it imports, so a
 * new generation re-imports the whole graph below a handler. Plain JavaScript: it runs in the
 * loader thread, before any TypeScript loader is in place for it.
 */
let roots = [];

export function initialize(data) {
  roots = data.roots;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const generation = context.parentURL ? new URL(context.parentURL).searchParams.get('generation') : null;
  const reloadable = roots.some((root) => resolved.url.startsWith(root)) && !resolved.url.includes('?');
  return generation && reloadable ? { ...resolved, url: `${resolved.url}?generation=${generation}` } : resolved;
}
