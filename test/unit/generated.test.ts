import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routeEntries } from '#lib/routes/index.ts';
import { sampleEvent } from '#infra/local/events.ts';
import { readmeWithRoutes } from '#infra/local/generate.ts';

/** What `npm run generate` derives from the route table must be committed up to date. */
describe('files generated from the route table', () => {
  it("README's endpoint map lists every route", () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme, 'README.md routes table is stale: run npm run generate').toBe(readmeWithRoutes(readme));
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
