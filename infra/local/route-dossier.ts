import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { RouteSpec } from '#lib/http/route.ts';
import { routeAreas } from '#lib/routes/index.ts';
import { consumers } from '#lib/routes/consumers.ts';
import { jobEntries } from '#lib/routes/jobs.ts';
import { PROJECT_ROOT, readImportGraph, type ImportGraph } from '#infra/local/import-graph.ts';

/*
 * docs/routes.md, written by `npm run generate` and checked by test/unit/generated.test.ts: for
 * each route, what a request passes through from top to bottom (handler, route entry, schemas,
 * flows, pure rules, data modules), read from the route table and from the import graph the layer
 * test judges. Derived, never edited by hand, so it cannot drift from the code.
 */
export const ROUTES_DOC = 'docs/routes.md';

export const CREDENTIAL_LABEL: Record<RouteSpec['credential'], string> = {
  operator: 'API token',
  apiKey: 'API key',
  buyer: 'buyer token + x-store-domain',
  buyerStore: 'x-store-domain',
  buyerOptional: 'x-store-domain (+ buyer token if logged in)',
  session: 'session cookie',
  storeHost: 'store domain',
  public: 'none',
};

const isFlow = (path: string) => path.startsWith('lib/flows/') || path.startsWith('lib/admin/');
const isRule = (path: string) => path.startsWith('lib/domain/');
const isData = (path: string) => path.startsWith('lib/db/');
const isOtherIo = (path: string) => /^lib\/(mail|s3|queue|payments)\//.test(path) || path === 'lib/server-secret.ts';

/** `from` and every module reachable from it through imports that `follow` accepts. */
function closure(graph: ImportGraph, from: string[], follow: (path: string) => boolean): string[] {
  const seen = new Set<string>();
  const queue = from.filter(follow);
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (seen.has(next)) continue;
    seen.add(next);
    queue.push(...(graph.get(next) ?? []).filter(follow));
  }
  return [...seen].sort();
}

/** The names a route's entry in its area file uses that the file imports from lib/schemas, with their modules. */
function schemasOf(areaFile: string, name: string): { name: string; module: string }[] {
  const source = ts.createSourceFile(areaFile, readFileSync(join(PROJECT_ROOT, areaFile), 'utf8'), ts.ScriptTarget.Latest, true);
  const importedFrom = new Map<string, string>();
  let entry: ts.Node | undefined;
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.importClause?.namedBindings && ts.isNamedImports(node.importClause.namedBindings)) {
      const module = node.moduleSpecifier.text.replace(/^#lib\//, 'lib/');
      for (const element of node.importClause.namedBindings.elements) importedFrom.set(element.name.text, module);
    }
    if (ts.isPropertyAssignment(node) && (ts.isStringLiteral(node.name) || ts.isIdentifier(node.name)) && node.name.text === name) entry = node.initializer;
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!entry) throw new Error(`${areaFile} has no entry '${name}'`);
  const used = new Map<string, string>();
  const collect = (node: ts.Node) => {
    const module = ts.isIdentifier(node) ? importedFrom.get(node.text) : undefined;
    if (module?.startsWith('lib/schemas/')) used.set((node as ts.Identifier).text, module);
    ts.forEachChild(node, collect);
  };
  collect(entry);
  return [...used].map(([schema, module]) => ({ name: schema, module }));
}

const link = (path: string) => `[${path}](../${path})`;
/** The handler's own flows first, then the flows they call. */
function flowLine(entry: string[], all: string[]): string {
  if (all.length === 0) return 'none (one access pattern: the handler calls lib/db directly)';
  const called = all.filter((flow) => !entry.includes(flow));
  return `${list(entry)}${called.length > 0 ? `, calling ${list(called)}` : ''}`;
}
const list = (paths: string[]) => (paths.length === 0 ? 'none' : paths.map(link).join(', '));

/** A function's flows, rules, data modules and other I/O, read down the import graph from its handler. */
function layersBelow(graph: ImportGraph, handler: string): string[] {
  const imports = graph.get(handler);
  if (!imports) throw new Error(`${handler} is missing`);
  const flows = closure(graph, imports, isFlow);
  const reached = [...imports, ...flows.flatMap((flow) => graph.get(flow) ?? [])];
  const otherIo = [...new Set(reached.filter(isOtherIo))].sort();
  return [
    `- flow: ${flowLine(imports.filter(isFlow), flows)}`,
    `- rules: ${list(closure(graph, reached, isRule))}`,
    `- data: ${list([...new Set(reached.filter(isData))].sort())}`,
    ...(otherIo.length > 0 ? [`- other I/O: ${list(otherIo)}`] : []),
  ];
}

function routeSection(graph: ImportGraph, areaFile: string, name: string, spec: RouteSpec): string[] {
  const handler = `functions/${name}.ts`;
  const schemas = schemasOf(areaFile, name);
  const byModule = new Map<string, string[]>();
  for (const schema of schemas) byModule.set(schema.module, [...(byModule.get(schema.module) ?? []), `\`${schema.name}\``]);
  const path = spec.api === 'store' ? `{store_url}${spec.path}` : spec.path;
  const reaches = [...(spec.uses ?? [])];
  return [
    `### ${name}`,
    '',
    `\`${spec.method} ${path}\`: ${spec.summary}`,
    '',
    `- handler: ${link(handler)}`,
    `- route: ${link(areaFile)}, credential ${CREDENTIAL_LABEL[spec.credential]}${spec.scope ? ` (scope \`${spec.scope}\`)` : ''}, table access \`${spec.access}\`${reaches.length > 0 ? `, also ${reaches.map((use) => `\`${use}\``).join(', ')}` : ''}`,
    `- schemas: ${byModule.size === 0 ? 'none' : [...byModule].map(([module, names]) => `${names.join(', ')} (${link(module)})`).join('; ')}`,
    ...layersBelow(graph, handler),
    '',
  ];
}

/** The functions that serve no route: the scheduled jobs, the stream and queue consumers, then any other handler. */
function otherFunctions(graph: ImportGraph, routeNames: Set<string>): string[] {
  const jobNames = new Set<string>(jobEntries().map(([name]) => name));
  const jobs = jobEntries().flatMap(([name, job]) => [
    `### ${name}`,
    '',
    `Scheduled \`${job.schedule}\`: ${job.summary}`,
    '',
    `- handler: ${link(`functions/${name}.ts`)}`,
    `- job: ${link('lib/routes/jobs.ts')}, table access \`${job.access}\``,
    ...layersBelow(graph, `functions/${name}.ts`),
    '',
  ]);
  const consumerEntries = Object.entries(consumers);
  const consumed = consumerEntries.flatMap(([name, consumer]) => [
    `### ${name}`,
    '',
    `${'stream' in consumer.source ? `On the table's stream (entities ${consumer.source.entities.map((entity) => `\`${entity}\``).join(', ')})` : `On the queue \`${consumer.source.queue}\``}: ${consumer.summary}`,
    '',
    `- handler: ${link(`functions/${name}.ts`)}`,
    `- consumer: ${link('lib/routes/consumers.ts')}, table access \`${consumer.access}\`${consumer.sendsTo.length > 0 ? `, sends to ${consumer.sendsTo.map((queue) => `\`${queue}\``).join(', ')}` : ''}`,
    ...layersBelow(graph, `functions/${name}.ts`),
    '',
  ]);
  const described = new Set<string>([...routeNames, ...jobNames, ...consumerEntries.map(([name]) => name)]);
  const others = [...graph.keys()]
    .filter((file) => file.startsWith('functions/'))
    .map((file) => file.slice('functions/'.length, -'.ts'.length))
    .filter((name) => !described.has(name))
    .flatMap((name) => [`### ${name}`, '', `- handler: ${link(`functions/${name}.ts`)}`, ...layersBelow(graph, `functions/${name}.ts`), '']);
  return [
    '## Functions that serve no route',
    '',
    "The scheduled jobs (lib/routes/jobs.ts), the consumers of the table's stream and of the queues",
    '(lib/routes/consumers.ts), then any other handler of functions/.',
    '',
    ...jobs,
    ...consumed,
    ...others,
  ];
}

/** The whole of docs/routes.md. */
export function routesDossier(graph: ImportGraph = readImportGraph()): string {
  const areas = Object.entries(routeAreas) as [string, Record<string, RouteSpec>][];
  const index = areas.flatMap(([, entries]) =>
    Object.entries(entries).map(([name, spec]) => {
      const path = spec.api === 'store' ? `{store_url}${spec.path}` : spec.path;
      return `| ${spec.method} | \`${path}\` | ${CREDENTIAL_LABEL[spec.credential]}${spec.scope ? ` (${spec.scope})` : ''} | [${name}](#${name}) |`;
    }),
  );
  const sections = areas.flatMap(([area, entries]) => {
    const areaFile = `lib/routes/${area}.ts`;
    return [
      `## ${area}`,
      '',
      `Area file ${link(areaFile)}, deployed as its own stack.`,
      '',
      ...Object.entries(entries).flatMap(([name, spec]) => routeSection(graph, areaFile, name, spec)),
    ];
  });
  return [
    '# Routes, one by one',
    '',
    '<!-- Generated by `npm run generate` (infra/local/route-dossier.ts); test/unit/generated.test.ts fails when it is stale. Do not edit. -->',
    '',
    'Every route of the table (lib/routes/), and for each what a request passes through, top down: the',
    'handler, the route entry (credential, table access, what else the function reaches), the schemas',
    'of its entry, the flows, the pure rules those flows apply and the data modules they read and',
    'write. Read from the route table and the import graph that test/unit/layers.test.ts judges; how',
    'the layers fit together is in [contributing.md](contributing.md). The functions that serve no route',
    '(scheduled jobs, stream and queue consumers) close the page.',
    '',
    '| method | path | credential | route |',
    '|---|---|---|---|',
    ...index,
    '',
    ...sections,
    ...otherFunctions(graph, new Set(areas.flatMap(([, entries]) => Object.keys(entries)))),
  ].join('\n');
}
