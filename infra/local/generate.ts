import { writeFileSync } from 'node:fs';
import { writeEvents } from '#infra/local/events.ts';
import { ROUTES_DOC, routesDossier } from '#infra/local/route-dossier.ts';
import { TYPESCRIPT_CLIENT_TYPES, typescriptClientTypes } from '#infra/local/typescript-client.ts';

/**
 * `npm run generate`: rewrites what derives from the route table and is committed: the sample
 * events (events/*.json), the route dossier (docs/routes.md) and the typed client's types
 * (clients/typescript/schema.d.ts). A test fails when any is stale.
 */
export async function generate(): Promise<{ events: number; routes: string; client: string }> {
  const events = writeEvents();
  writeFileSync(ROUTES_DOC, routesDossier());
  writeFileSync(TYPESCRIPT_CLIENT_TYPES, await typescriptClientTypes());
  return { events: events.length, routes: ROUTES_DOC, client: TYPESCRIPT_CLIENT_TYPES };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await generate()));
