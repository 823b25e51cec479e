import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runOnce, type ClaimedCommand } from '../../examples/delivery-agent/agent.ts';
import { createPackage, orderBody, placeOrder } from '../support/builders.ts';
import { newStore } from '../support/client.ts';
import { createServer } from '../support/delivery.ts';

/** The reference agent (examples/delivery-agent), two of them on one store, as two game servers would run it. */
describe('examples/delivery-agent', () => {
  it('two agents run every command exactly once, each order in its sequence', { timeout: 120_000 }, async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    const pkg = await createPackage(store, {
      commands: [
        { command: 'first {order_id}' },
        { command: 'on A {order_id}', servers: [a.id] },
        { command: 'on both {order_id}', servers: [a.id, b.id] },
        { command: 'last {order_id}' },
      ],
    });
    const orders = [];
    for (let i = 0; i < 6; i++) {
      const order = await placeOrder(store, orderBody(pkg.id));
      await store.post(`/v1/app/order/${order.id}/approve`);
      orders.push(order.id);
    }
    const runs: { server: string; command: ClaimedCommand }[] = [];
    const agent = (server: string, key: string) => ({
      api: `${inject('apiUrl')}/v1`,
      key,
      limit: 3,
      execute: async (command: ClaimedCommand) => {
        runs.push({ server, command });
        return { ok: true, output: `ran on ${server}` };
      },
    });
    const agents = [agent('A', a.key), agent('B', b.key)];
    // Both agents claim side by side until a round hands nothing to either.
    for (let round = 0; round < 100; round++) {
      const ran = await Promise.all(agents.map((options) => runOnce(options)));
      if (ran.every((count) => count === 0)) break;
    }
    expect(runs).toHaveLength(6 * 5);
    expect(new Set(runs.map((run) => run.command.id)).size).toBe(runs.length);
    for (const orderId of orders) {
      const ofOrder = runs.filter((run) => run.command.order_id === orderId).map((run) => run.command.command.replace(` ${orderId}`, ''));
      expect(ofOrder[0]).toBe('first');
      expect(ofOrder[ofOrder.length - 1]).toBe('last');
      expect(ofOrder.indexOf('on A')).toBeLessThan(ofOrder.lastIndexOf('on both'));
    }
    expect(runs.filter((run) => run.command.command.startsWith('on A')).every((run) => run.server === 'A')).toBe(true);
    const statuses = (await store.get('/v1/app/command?page_size=200')).body.data.map((command: { status: string }) => command.status);
    expect(statuses).toEqual(Array(30).fill('DONE'));
  });
});
