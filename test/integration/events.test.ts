import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runnableEvent } from '#infra/local/invoke-event.ts';
import { lambdaContext, loadHandler } from '#infra/local/server.ts';
import { seedDemoStore } from '#infra/local/seed.ts';

/**
 * Every sample event of events/ answers 2xx on the demo store, as `npm run invoke <function>`
 * runs it (same filling of placeholders, same handler): the events are examples a reader runs,
 * so none may be a 404 or a 422. One pass over a fresh demo store: creations first (the updates
 * act on what they made), deletions last. What an event consumes (an approved order to refund or
 * charge back, a pending withdrawal to pay or reject, a failed command, a logged webhook attempt,
 * an unconfirmed upload, a link) the seed prepared for that event alone, and delivery-ack's lease
 * is taken just before it, so no event spends what another one needs.
 */
const phase = (name: string) => (name.endsWith('-create') ? 0 : name.endsWith('-delete') ? 2 : 1);
const names = readdirSync('events')
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -5))
  .sort((a, b) => phase(a) - phase(b) || a.localeCompare(b));

let localDir: string;
beforeAll(async () => {
  localDir = mkdtempSync(join(tmpdir(), 'store-api-events-'));
  // The demo store as `npm start` seeds it, its webhook delivering to this run's stack.
  writeFileSync(join(localDir, 'demo.json'), JSON.stringify(await seedDemoStore(inject('apiUrl'))));
});
afterAll(() => rmSync(localDir, { recursive: true, force: true }));

describe('events/', () => {
  it.each(names)('%s answers 2xx on the demo store', async (name) => {
    const event = await runnableEvent(readFileSync(`events/${name}.json`, 'utf8'), localDir, {});
    const handler = await loadHandler(name);
    const result = await handler(event, lambdaContext(name, 'events-test'));
    expect(result.statusCode, result.body).toBeGreaterThanOrEqual(200);
    expect(result.statusCode, result.body).toBeLessThan(300);
  });
});
