import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { call } from '../support/client.ts';

/** The admin command line, run as a user would, against the test run's DynamoDB Local. */
function admin(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'infra/admin.ts', ...args], {
    env: {
      ...process.env,
      TABLE_NAME: inject('tableName'),
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    },
    encoding: 'utf8',
  });
  const parse = (text: string) => (text.trim() ? JSON.parse(text) : undefined);
  return { status: result.status, out: parse(result.stdout), err: parse(result.stderr.split('\n').filter((l) => l.startsWith('{')).join('\n')) };
}

const domain = () => `cli-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}.test.localhost`;

describe('npm run admin', () => {
  it('creates a store whose token works, and revokes it', async () => {
    const created = admin('store', 'create', '--name', 'CLI shop', '--domain', domain());
    expect(created.status).toBe(0);
    expect(created.out).toEqual({ store_id: expect.any(Number), domain: expect.any(String), api_token: expect.stringMatching(/^sat_/) });
    expect((await call('GET', '/v1/app/store', { token: created.out.api_token })).body.name).toBe('CLI shop');

    const second = admin('token', 'create', '--store', String(created.out.store_id));
    expect(second.status).toBe(0);
    const other = admin('store', 'create', '--name', 'Other shop', '--domain', domain()).out;
    // Named as another store's, the token is not revoked.
    expect(admin('token', 'revoke', '--store', String(other.store_id), '--token', created.out.api_token).status).toBe(1);
    expect((await call('GET', '/v1/app/store', { token: created.out.api_token })).status).toBe(200);
    expect(admin('token', 'revoke', '--store', String(created.out.store_id), '--token', created.out.api_token).out).toEqual({ revoked: true });
    expect((await call('GET', '/v1/app/store', { token: created.out.api_token })).status).toBe(401);
    expect((await call('GET', '/v1/app/store', { token: second.out.api_token })).status).toBe(200);
    expect(admin('token', 'revoke', '--store', String(created.out.store_id), '--token', created.out.api_token).status).toBe(1);
  });

  it('creates and revokes an identify key', async () => {
    const store = admin('store', 'create', '--name', 'Key shop', '--domain', domain()).out;
    const key = admin('key', 'create', '--store', String(store.store_id), '--scope', 'customers:identify');
    expect(key.status).toBe(0);
    expect(key.out).toMatchObject({ store_id: store.store_id, key: expect.stringMatching(/^sak_/), scopes: ['customers:identify'] });
    const other = admin('store', 'create', '--name', 'Other key shop', '--domain', domain()).out;
    expect(admin('key', 'revoke', '--store', String(other.store_id), '--key', key.out.key).status).toBe(1);
    expect(admin('key', 'revoke', '--store', String(store.store_id), '--key', key.out.key).out).toEqual({ revoked: true });
    // A token is not a key: revoking it as a key does nothing.
    expect(admin('key', 'revoke', '--store', String(store.store_id), '--key', store.api_token).status).toBe(1);
    expect((await call('GET', '/v1/app/store', { token: store.api_token })).status).toBe(200);
  });

  it('revokes a token or a key by the secret alone (extensions section 2); --store is a guard that must match', async () => {
    const store = admin('store', 'create', '--name', 'Bare revoke shop', '--domain', domain()).out;
    const other = admin('store', 'create', '--name', 'Guard shop', '--domain', domain()).out;
    const key = admin('key', 'create', '--store', String(store.store_id), '--scope', 'customers:identify').out.key;

    // A guard naming another store: a clear error, and nothing revoked.
    const mismatch = admin('token', 'revoke', '--token', store.api_token, '--store', String(other.store_id));
    expect(mismatch.status).toBe(1);
    expect(mismatch.err).toEqual({ status: 422, error: `--store ${other.store_id} does not match: this API token belongs to store ${store.store_id}; nothing revoked` });
    expect(admin('key', 'revoke', '--key', key, '--store', String(other.store_id)).err).toMatchObject({ status: 422 });
    expect((await call('GET', '/v1/app/store', { token: store.api_token })).status).toBe(200);

    const revoked = admin('token', 'revoke', '--token', store.api_token);
    expect(revoked.status, JSON.stringify(revoked.err)).toBe(0);
    expect(revoked.out).toEqual({ revoked: true });
    expect((await call('GET', '/v1/app/store', { token: store.api_token })).status).toBe(401);
    expect((await call('GET', '/v1/app/store', { token: other.api_token })).status).toBe(200);
    expect(admin('key', 'revoke', '--key', key).out).toEqual({ revoked: true });
    // Gone, unknown, or of the other kind: 404, nothing revoked.
    expect(admin('token', 'revoke', '--token', store.api_token).err).toMatchObject({ status: 404 });
    expect(admin('key', 'revoke', '--key', other.api_token).err).toMatchObject({ status: 404 });
    expect(admin('token', 'revoke', '--token', other.api_token, '--store', 'x').err).toMatchObject({ status: 422 });
    expect(admin('token', 'revoke').err).toEqual({ status: 422, error: '--token is required' });
    expect((await call('GET', '/v1/app/store', { token: other.api_token })).status).toBe(200);
  });

  it('refuses bad input with a JSON error and exit code 1', () => {
    const taken = domain();
    expect(admin('store', 'create', '--name', 'First', '--domain', taken).status).toBe(0);
    const duplicate = admin('store', 'create', '--name', 'Second', '--domain', taken);
    expect(duplicate.status).toBe(1);
    expect(duplicate.err).toMatchObject({ status: 409 });
    expect(admin('store', 'create', '--name', 'No domain').err).toMatchObject({ status: 422 });
    expect(admin('token', 'create', '--store', '999999').err).toMatchObject({ status: 404 });
    expect(admin('key', 'create', '--store', '1', '--scope', 'everything').err).toMatchObject({ status: 422 });
    expect(admin('frobnicate').status).toBe(2);
  });
});
