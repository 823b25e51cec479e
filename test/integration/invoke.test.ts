import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sampleWarning } from '#infra/local/invoke-event.ts';
import { seedDemoStore } from '#infra/local/seed.ts';

/** `npm run invoke`, run as a user would, against the test run's stack and a demo store of its own. */
let localDir: string;
function invoke(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'infra/local/invoke.ts', ...args], {
    env: {
      ...process.env,
      LOCAL_DIR: localDir,
      TABLE_NAME: inject('tableName'),
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      S3_ENDPOINT: inject('s3Endpoint'),
      IMAGES_BUCKET: inject('bucket'),
      SERVER_SECRET_FILE: join(inject('localDir'), 'server-secret.json'),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    },
    encoding: 'utf8',
  });
  return { status: result.status, out: result.stdout, err: result.stderr };
}

beforeAll(async () => {
  localDir = mkdtempSync(join(tmpdir(), 'store-api-invoke-'));
  writeFileSync(join(localDir, 'demo.json'), JSON.stringify(await seedDemoStore(inject('apiUrl'), 'demo-invoke.localhost')));
});
afterAll(() => rmSync(localDir, { recursive: true, force: true }));

describe('npm run invoke', () => {
  it('lists the functions with their sample method and path when given none', () => {
    const listed = invoke();
    expect(listed.status).toBe(0);
    expect(listed.out).toMatch(/^ {2}tag-list +GET \/v1\/app\/tag$/m);
    expect(listed.out).toMatch(/^ {2}delivery-claim +POST \/v1\/delivery\/claim$/m);
    expect(listed.out).toMatch(/^ {2}webhook-sender +\(no sample event: pass an event file\)$/m);
  });

  it('answers an unknown function, a function without a sample, or a missing file in one line', () => {
    for (const [args, line] of [
      [['nope'], 'npm run invoke: no function "nope" (`npm run invoke` lists them)'],
      [['webhook-router'], 'npm run invoke: webhook-router has no sample event: pass an event file (npm run invoke -- webhook-router <file>)'],
      [['tag-list', 'no-such-file.json'], 'npm run invoke: no event file no-such-file.json'],
    ] as const) {
      const answer = invoke(...args);
      expect(answer.status).toBe(2);
      expect(answer.err).toBe(`${line}\n`);
      expect(answer.out).toBe('');
    }
  });

  it('warns before a sample that takes leases, then runs it; a plain read runs without a word', () => {
    const claimed = invoke('delivery-claim');
    expect(claimed.err.split('\n')[0]).toBe(
      `npm run invoke: note: delivery-claim ${"takes 60-second leases on the demo server's due commands: no claim gets them again until the leases lapse"}.`,
    );
    expect(claimed.status, claimed.err).toBe(0);
    expect(JSON.parse(claimed.out).body.lease_id).toEqual(expect.any(String));
    const read = invoke('tag-list');
    expect(read.status, read.err).toBe(0);
    expect(read.err).toBe('');
  });

  it('names what a consuming or deleting sample spends', () => {
    const text = (name: string) => readFileSync(`events/${name}.json`, 'utf8');
    expect(sampleWarning('order-refund', text('order-refund'))).toBe(
      'npm run invoke: note: order-refund refunds order 4, approved for this sample: run once, it is refunded for good.',
    );
    expect(sampleWarning('server-delete', text('server-delete'))).toBe('npm run invoke: note: server-delete deletes /v1/app/server/1 of the demo store for good.');
    expect(sampleWarning('delivery-ack', text('delivery-ack'))).toContain('acks it DONE');
    expect(sampleWarning('tag-list', text('tag-list'))).toBeUndefined();
    expect(sampleWarning('order-get', text('order-get'))).toBeUndefined();
  });
});
