import { writeFileSync } from 'node:fs';
import { writeEvents } from '#infra/local/events.ts';
import { ROUTES_DOC, routesDossier } from '#infra/local/route-dossier.ts';

/**
 * `npm run generate`: rewrites what derives from the route table and is committed: the sample
 * events (events/*.json) and the route dossier (docs/routes.md). A test fails when either is stale.
 */
export function generate(): { events: number; routes: string } {
  const events = writeEvents();
  writeFileSync(ROUTES_DOC, routesDossier());
  return { events: events.length, routes: ROUTES_DOC };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(generate()));
