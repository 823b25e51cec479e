import { readFileSync, writeFileSync } from 'node:fs';
import type { RouteSpec } from '#lib/http/route.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { writeEvents } from '#infra/local/events.ts';

/**
 * `npm run generate`: rewrites what derives from the route table and is committed: the sample
 * events (events/*.json) and the endpoint map of README.md (between the routes markers).
 * A test fails when either is stale.
 */
const START = '<!-- routes:start -->';
const END = '<!-- routes:end -->';

const CREDENTIAL_LABEL: Record<RouteSpec['credential'], string> = {
  operator: 'API token',
  apiKey: 'API key',
  buyer: 'buyer token + x-store-domain',
  buyerStore: 'x-store-domain',
  buyerOptional: 'x-store-domain (+ buyer token if logged in)',
  session: 'session cookie',
  storeHost: 'store domain',
  public: 'none',
};

/** Where a route's schema and data access live, found from its handler's imports. */
function sourcesOf(name: string): string {
  const handler = readFileSync(`functions/${name}.ts`, 'utf8');
  const libs = [...handler.matchAll(/from '#lib\/((?:flows|db|domain|mail)\/[\w-]+)\.ts'/g)].map(([, path]) => `lib/${path}.ts`);
  return [...new Set(libs)].map((path) => `\`${path}\``).join(', ');
}

export function routesMarkdown(): string {
  const rows = routeEntries().map(([name, spec]) => {
    const path = spec.api === 'store' ? `{store_url}${spec.path}` : spec.path;
    return `| ${spec.method} | \`${path}\` | ${CREDENTIAL_LABEL[spec.credential]}${spec.scope ? ` (${spec.scope})` : ''} | [functions/${name}.ts](functions/${name}.ts) | ${sourcesOf(name)} |`;
  });
  return [START, '| method | path | credential | handler | data access / logic |', '|---|---|---|---|---|', ...rows, END].join('\n');
}

export function readmeWithRoutes(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < 0) throw new Error('README.md has no routes markers');
  return `${readme.slice(0, start)}${routesMarkdown()}${readme.slice(end + END.length)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const events = writeEvents();
  writeFileSync('README.md', readmeWithRoutes(readFileSync('README.md', 'utf8')));
  console.log(JSON.stringify({ events: events.length, readme: 'routes table updated' }));
}
