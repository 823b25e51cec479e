import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runnableEvent } from '#infra/local/invoke-event.ts';
import { lambdaContext, loadHandler } from '#infra/local/server.ts';
import { type DemoStore, seedDemoStore } from '#infra/local/seed.ts';
import { verifyDelivery } from '../../examples/webhook-receiver/receiver.ts';

/**
 * Every sample event of events/ answers 2xx on the demo store, as `npm run invoke <function>`
 * runs it (same filling of placeholders, same handler): the events are examples a reader runs,
 * so none may be a 404 or a 422. What an event consumes (an approved order to refund or charge
 * back, a pending withdrawal to pay or reject, a failed command, a logged webhook attempt, an
 * unconfirmed upload, a link, a category, a note) the seed prepared for that event alone, and
 * delivery-ack's lease is taken just before it, so no event spends what another one needs, nor
 * needs what another one made: two passes, each over a fresh demo store, show it. The first runs
 * creations first, the second every read and update before any creation; deletions come last in
 * both (they remove what others act on, such as package 1).
 */
const kindOf = (name: string) => (name.endsWith('-create') ? 'create' : name.endsWith('-delete') ? 'delete' : 'other');
const files = readdirSync('events')
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -5));
const pass = (rank: Record<ReturnType<typeof kindOf>, number>) => [...files].sort((a, b) => rank[kindOf(a)] - rank[kindOf(b)] || a.localeCompare(b));

describe.each([
  ['creations first', pass({ create: 0, other: 1, delete: 2 }), 'demo.localhost'],
  ['reads and updates before any creation', pass({ other: 0, create: 1, delete: 2 }), 'demo-2.localhost'],
])('events/, %s', (_order, names, domain) => {
  let localDir: string;
  beforeAll(async () => {
    localDir = mkdtempSync(join(tmpdir(), 'store-api-events-'));
    // The demo store as `npm start` seeds it, its webhook delivering to this run's stack.
    writeFileSync(join(localDir, 'demo.json'), JSON.stringify(await seedDemoStore(inject('apiUrl'), domain)));
  });
  afterAll(() => rmSync(localDir, { recursive: true, force: true }));

  it("carries the demo webhook's secret, which verifies what the stack's inbox received with the standardwebhooks library", () => {
    const demo = JSON.parse(readFileSync(join(localDir, 'demo.json'), 'utf8')) as DemoStore;
    const inbox = readFileSync(join(inject('localDir'), 'webhooks.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { headers: Record<string, string>; body: string })
      .filter((delivery) => (JSON.parse(delivery.body) as { store_id: number }).store_id === demo.store_id);
    expect(inbox.length).toBeGreaterThan(0);
    for (const delivery of inbox) expect(verifyDelivery(demo.webhook_secret, delivery.body, delivery.headers)?.id).toBe(delivery.headers['webhook-id']);
    expect(verifyDelivery(`${demo.webhook_secret.slice(0, -4)}AAA=`, inbox[0]!.body, inbox[0]!.headers)).toBeNull();
  });

  it.each(names)('%s answers 2xx on the demo store', async (name) => {
    const event = await runnableEvent(readFileSync(`events/${name}.json`, 'utf8'), localDir, {});
    const handler = await loadHandler(name);
    const result = await handler(event, lambdaContext(name, 'events-test'));
    // A button of the TEST page answers as a form's POST does: 303 back to the page.
    if (name === 'payment-test-action') {
      expect(result.statusCode, result.body).toBe(303);
      return;
    }
    expect(result.statusCode, result.body).toBeGreaterThanOrEqual(200);
    expect(result.statusCode, result.body).toBeLessThan(300);
  });
});
