import type { ImportGraph } from '#infra/local/import-graph.ts';

/*
 * The layers of lib/ and functions/ and the imports each may make (docs/contributing.md, "The
 * layers"). A module imports from its own layer or from a lower one; a few lines between siblings
 * are closed on purpose (lib/db and lib/domain never see each other; lib/domain does no I/O).
 */
export type { ImportGraph };

/** Rank: a module may import only modules of a rank at most its own (and not a forbidden one). */
export const LAYERS = {
  functions: 7,
  openapi: 6,
  routes: 5,
  http: 4,
  flows: 3,
  domain: 2,
  db: 2,
  mail: 2,
  s3: 2,
  queue: 2,
  payments: 2,
  base: 1,
} as const;
export type Layer = keyof typeof LAYERS;

/** The layer of a project path (`lib/db/tag.ts`), or undefined for a path outside the map. */
export function layerOf(path: string): Layer | undefined {
  if (path.startsWith('functions/')) return 'functions';
  if (path === 'lib/openapi.ts') return 'openapi';
  if (path.startsWith('lib/routes/')) return 'routes';
  if (path.startsWith('lib/http/')) return 'http';
  if (path.startsWith('lib/flows/') || path.startsWith('lib/admin/')) return 'flows';
  if (path.startsWith('lib/domain/')) return 'domain';
  if (path.startsWith('lib/db/')) return 'db';
  if (path.startsWith('lib/mail/')) return 'mail';
  if (path.startsWith('lib/s3/')) return 's3';
  if (path.startsWith('lib/queue/')) return 'queue';
  if (path.startsWith('lib/payments/')) return 'payments';
  if (path.startsWith('lib/schemas/') || ['lib/errors.ts', 'lib/config.ts', 'lib/crypto.ts', 'lib/clock.ts', 'lib/server-secret.ts'].includes(path)) return 'base';
  return undefined;
}

/** Sibling lines that stay closed even though the ranks are equal. */
const FORBIDDEN: Partial<Record<Layer, readonly Layer[]>> = {
  domain: ['db', 'mail', 's3', 'queue', 'payments'],
  db: ['domain', 'mail', 's3', 'queue', 'payments'],
  mail: ['db', 'domain', 's3', 'queue', 'payments'],
  s3: ['db', 'domain', 'mail', 'queue', 'payments'],
  queue: ['db', 'domain', 'mail', 's3', 'payments'],
  // Provider adapters speak HTTP to providers and nothing else: the flows read, decide and write around them.
  payments: ['db', 'domain', 'mail', 's3', 'queue'],
};

/** Pure rules: no AWS SDK, no file system or network, no configuration read from the environment. */
const DOMAIN_FORBIDDEN_PACKAGES = [/^@aws-sdk\//, /^@middy\//, /^node:(fs|http|https|net|child_process|dns)/, /^aws-lambda$/];
const DOMAIN_FORBIDDEN_MODULES = ['lib/config.ts', 'lib/crypto.ts', 'lib/clock.ts', 'lib/server-secret.ts'];

const isProjectPath = (target: string) => target.startsWith('lib/') || target.startsWith('functions/') || target.startsWith('infra/');

/** Every broken rule, as `from -> to (why)` or `cycle: a -> b -> a`. */
export function importViolations(graph: ImportGraph): string[] {
  const violations: string[] = [];
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from);
    if (!fromLayer) continue;
    for (const to of targets) {
      if (!isProjectPath(to)) {
        if (fromLayer === 'domain' && DOMAIN_FORBIDDEN_PACKAGES.some((pattern) => pattern.test(to))) {
          violations.push(`${from} -> ${to} (I/O in lib/domain: rules are pure)`);
        }
        continue;
      }
      const toLayer = layerOf(to);
      if (!toLayer) {
        violations.push(`${from} -> ${to} (outside the layers)`);
      } else if (fromLayer === 'domain' && DOMAIN_FORBIDDEN_MODULES.includes(to)) {
        violations.push(`${from} -> ${to} (I/O in lib/domain: configuration, randomness and time are parameters)`);
      } else if (LAYERS[toLayer] > LAYERS[fromLayer]) {
        violations.push(`${from} -> ${to} (up: ${fromLayer} may not import ${toLayer})`);
      } else if (FORBIDDEN[fromLayer]?.includes(toLayer)) {
        violations.push(`${from} -> ${to} (across: ${fromLayer} never imports ${toLayer})`);
      }
    }
  }
  return [...violations, ...cycles(graph)];
}

/** The import cycles among project modules, each reported once from its first module. */
function cycles(graph: ImportGraph): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push(`cycle: ${[...stack.slice(stack.indexOf(next)), next].join(' -> ')}`);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}
