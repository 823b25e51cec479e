import { describe, expect, it } from 'vitest';
import { COMMANDS_BYTES_MAX } from '#lib/schemas/package.ts';
import { firstError, newStore } from '../support/client.ts';

/**
 * Bodies bounded in bytes, against DynamoDB Local: what a character limit let through and
 * DynamoDB refused (a 606 KB package: 500) is a 422 naming the field, and the largest package the
 * bounds accept is stored, read back, and its answer kept and replayed for an Idempotency-Key.
 */
const commands = (count: number, text: (index: number) => string) => Array.from({ length: count }, (_, index) => ({ command: text(index) }));

describe('a package bounded in bytes', () => {
  it('100 commands of 2,000 "€" (606 KB once stored) is a 422 on commands, and nothing is created', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/package', { name: 'Huge', price: 1, commands: commands(100, () => '€'.repeat(2000)) });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'commands', message: expect.stringContaining(`${COMMANDS_BYTES_MAX} bytes`) });
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(0);
  });

  it('the same on a PATCH: the package keeps its commands', async () => {
    const store = await newStore();
    const created = await store.post('/v1/app/package', { name: 'Small', price: 1, commands: commands(1, () => 'say hi') });
    const res = await store.patch(`/v1/app/package/${created.body.id}`, { commands: commands(100, () => '😀'.repeat(1000)) });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('commands');
    expect((await store.get(`/v1/app/package/${created.body.id}`)).body.commands).toEqual([expect.objectContaining({ command: 'say hi' })]);
  });

  it.each([
    ['ASCII: 100 commands of 2,000 characters', () => commands(100, () => 'a'.repeat(2000))],
    // As many commands of 2,000 "€" (6 KB each) as the bound takes, and a description of 5,000 "€".
    ['3-byte characters, up to the byte bound', () => commands(Math.floor(COMMANDS_BYTES_MAX / 6110), (index) => `${index % 10}${'€'.repeat(1999)}`)],
  ])('the largest accepted package is stored, and its answer kept for an Idempotency-Key: %s', async (_, make) => {
    const store = await newStore();
    const body = { name: '€'.repeat(100), price: 1, description: '€'.repeat(5000), commands: make() };
    const headers = { 'idempotency-key': `big-${Math.random()}` };
    const first = await store.post('/v1/app/package', body, { headers });
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    const replay = await store.post('/v1/app/package', body, { headers });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect((await store.get(`/v1/app/package/${first.body.id}`)).body.commands).toEqual(body.commands.map((command) => expect.objectContaining(command)));
  });
});
