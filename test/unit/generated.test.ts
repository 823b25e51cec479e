import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routeEntries } from '#lib/routes/index.ts';
import { sampleEvent } from '#infra/local/events.ts';
import { ROUTES_DOC, routesDossier } from '#infra/local/route-dossier.ts';
import { readImportGraph } from '#infra/local/import-graph.ts';

/** What `npm run generate` derives from the route table must be committed up to date. */
describe('files generated from the route table', () => {
  it(`${ROUTES_DOC}, the route dossier, is up to date`, () => {
    expect(readFileSync(ROUTES_DOC, 'utf8'), `${ROUTES_DOC} is stale: run npm run generate`).toBe(routesDossier());
  });

  it('the dossier follows the import graph: a flow a handler starts importing shows under its route', () => {
    const graph = readImportGraph();
    graph.set('functions/tag-get.ts', [...graph.get('functions/tag-get.ts')!, 'lib/flows/checkout.ts']);
    const section = routesDossier(graph).split('### tag-get\n')[1]!.split('\n### ')[0]!;
    expect(section).toContain('- flow: [lib/flows/checkout.ts](../lib/flows/checkout.ts)');
    expect(section).toMatch(/- rules: .*lib\/domain\/pricing\.ts/);
    expect(routesDossier()).not.toBe(routesDossier(graph));
  });

  it('names every route once, with its section', () => {
    const dossier = routesDossier();
    for (const [name] of routeEntries()) {
      expect(dossier.split(`\n### ${name}\n`), name).toHaveLength(2);
      expect(dossier, name).toContain(`[${name}](#${name})`);
    }
  });

  for (const [name, spec] of routeEntries()) {
    it(`${name} has its handler file and an up-to-date sample event`, () => {
      expect(existsSync(`functions/${name}.ts`)).toBe(true);
      const file = `events/${name}.json`;
      expect(existsSync(file), `${file} missing: run npm run generate`).toBe(true);
      expect(JSON.parse(readFileSync(file, 'utf8')), `${file} is stale: run npm run generate`).toEqual(JSON.parse(JSON.stringify(sampleEvent(spec))));
    });
  }
});
