import { expect } from 'vitest';
import { getCommandRecord, saveChange } from '#lib/db/command.ts';
import type { CommandRecord } from '#lib/schemas/command.ts';
import { call, markInUse } from './client.ts';
import { createPackage, orderBody, placeOrder, type Store } from './builders.ts';

/** Game servers, their keys, and the claim/ack calls a game server makes. */
export async function createServer(store: Store, name = 'Survival') {
  const res = await store.post('/v1/app/server', { name });
  expect(res.status, res.text).toBe(200);
  const key = await store.post(`/v1/app/server/${res.body.id}/key`);
  expect(key.status, key.text).toBe(200);
  await markInUse(key.body.key);
  return { id: res.body.id as number, name, key: key.body.key as string };
}

export const claim = (key: string, body: Record<string, unknown> = {}) => call('POST', '/v1/delivery/claim', { token: key, json: body });
export const ack = (key: string, lease_id: string, results: { id: number; status: 'DONE' | 'FAILED'; response?: string }[]) =>
  call('POST', '/v1/delivery/ack', { token: key, json: { lease_id, results } });

/** Claims and acks everything handed out as DONE; answers the ids run. */
export async function drain(key: string, body: Record<string, unknown> = {}): Promise<number[]> {
  const res = await claim(key, body);
  expect(res.status, res.text).toBe(200);
  if (res.body.lease_id === null) return [];
  const ids = res.body.commands.map((command: { id: number }) => command.id) as number[];
  const acked = await ack(
    key,
    res.body.lease_id,
    ids.map((id) => ({ id, status: 'DONE' })),
  );
  expect(acked.body.accepted).toEqual(ids);
  return ids;
}

/** An approved order of a package with these command templates. */
export async function approvedOrder(store: Store, commands: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const pkg = await createPackage(store, { commands });
  const order = await placeOrder(store, orderBody(pkg.id, extra));
  const approved = await store.post(`/v1/app/order/${order.id}/approve`);
  expect(approved.status, approved.text).toBe(200);
  return { pkg, order };
}

/** Rewrites a stored command (a lease's end, tries), as time passing would; the next read sees it. */
export async function rewind(storeId: number, commandId: number, change: (record: CommandRecord) => Partial<CommandRecord>) {
  const record = (await getCommandRecord(storeId, commandId))!;
  await saveChange(record, { ...record, ...change(record) });
}

export const PAST_ISO = '2020-01-01T00:00:00.000Z';
