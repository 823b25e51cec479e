import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { call, newStore } from '../support/client.ts';
import { claim, createServer } from '../support/delivery.ts';

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
  const parse = (text: string) => (text.trim().startsWith('{') ? JSON.parse(text) : undefined);
  return {
    status: result.status,
    text: result.stdout,
    out: parse(result.stdout),
    err: parse(
      result.stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .join('\n'),
    ),
  };
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

  it('answers --help for the whole and for each command, and refuses an unknown or valueless flag before doing anything', () => {
    const overview = admin('--help');
    expect(overview.status).toBe(0);
    for (const command of [
      'store create',
      'store list',
      'token create',
      'token list',
      'token revoke',
      'key create',
      'key list',
      'key rotate',
      'key revoke',
      'order index-clients',
      'order recount',
      'cart-index',
    ]) {
      expect(overview.text).toContain(`  ${command} `);
      const help = admin(...command.split(' '), '--help');
      expect(help.status, command).toBe(0);
      expect(help.text).toContain(`Usage: npm run admin -- ${command}`);
      expect(help.text).toContain('Prints: {');
    }
    expect(admin('key', 'create', '--help').text).toContain('--scope    customers:identify | delivery (required)');
    expect(admin().status).toBe(2);

    const unused = domain();
    const unknown = admin('store', 'create', '--name', 'Typo shop', '--domian', unused);
    expect(unknown.status).toBe(2);
    expect(unknown.err.error).toContain("Unknown option '--domian'");
    expect(admin('store', 'create', '--name', 'Typo shop', '--domain').err.error).toContain("'--domain <value>' argument missing");
    expect(admin('store', 'create', '--name', 'Typo shop', '--domain', unused, 'extra').status).toBe(2);
    // Nothing was created: the domain is still free.
    expect(admin('store', 'create', '--name', 'Typo shop', `--domain=${unused}`).status).toBe(0);
  });

  it("lists stores, and a store's tokens and keys without their secrets; a revoked one leaves the list", async () => {
    const store = admin('store', 'create', '--name', 'Listed shop', '--domain', domain()).out;
    const other = admin('store', 'create', '--name', 'Other listed shop', '--domain', domain()).out;
    const stores = admin('store', 'list').out.data as { id: number; name: string; domain: string; created_at: string }[];
    expect(stores.find((listed) => listed.id === store.store_id)).toEqual({ id: store.store_id, name: 'Listed shop', domain: store.domain, created_at: expect.any(String) });
    expect(stores.map((listed) => listed.id)).toEqual([...stores.map((listed) => listed.id)].sort((a, b) => a - b));

    const second = admin('token', 'create', '--store', String(store.store_id)).out;
    const key = admin('key', 'create', '--store', String(store.store_id), '--scope', 'customers:identify').out;
    const tokens = admin('token', 'list', '--store', String(store.store_id));
    expect(tokens.out).toEqual({
      store_id: store.store_id,
      data: [
        { id: expect.any(Number), kind: 'api_token', scopes: [], server_id: null, created_at: expect.any(String), last_used_at: null },
        { id: second.credential_id, kind: 'api_token', scopes: [], server_id: null, created_at: expect.any(String), last_used_at: null },
      ],
    });
    expect(tokens.text).not.toContain(store.api_token);
    expect(tokens.text).not.toContain(second.api_token);
    const keys = admin('key', 'list', '--store', String(store.store_id));
    expect(keys.out.data).toEqual([
      { id: key.credential_id, kind: 'api_key', scopes: ['customers:identify'], server_id: null, created_at: expect.any(String), last_used_at: null },
    ]);
    expect(keys.text).not.toContain(key.key);
    // Tenancy: the other store's lists hold only its own token.
    expect(admin('token', 'list', '--store', String(other.store_id)).out.data).toHaveLength(1);
    expect(admin('key', 'list', '--store', String(other.store_id)).out.data).toEqual([]);

    expect(admin('token', 'revoke', '--token', second.api_token).out).toEqual({ revoked: true });
    expect(admin('token', 'list', '--store', String(store.store_id)).out.data.map((listed: { id: number }) => listed.id)).toEqual([tokens.out.data[0].id]);
    expect(admin('key', 'list', '--store', '999999').err).toMatchObject({ status: 404 });
    expect(admin('token', 'list').err).toEqual({ status: 422, error: '--store is required' });
  });

  it('rotates a delivery key: the new one claims, the old one is refused, the list and the server follow', async () => {
    const store = await newStore();
    const server = await createServer(store);
    expect((await claim(server.key)).status).toBe(200);
    const rotated = admin('key', 'rotate', '--key', server.key);
    expect(rotated.status, JSON.stringify(rotated.err)).toBe(0);
    expect(rotated.out).toEqual({
      store_id: store.storeId,
      key: expect.stringMatching(/^sak_/),
      credential_id: expect.any(Number),
      scopes: ['delivery'],
      replaced: expect.any(Number),
    });
    expect((await claim(server.key)).status).toBe(401);
    expect((await claim(rotated.out.key)).status).toBe(200);
    const listed = admin('key', 'list', '--store', String(store.storeId)).out.data as { id: number; server_id: number | null }[];
    expect(listed.filter((entry) => entry.server_id === server.id)).toEqual([expect.objectContaining({ id: rotated.out.credential_id, scopes: ['delivery'] })]);
    // Rotating the old key again: it is gone (404), nothing made.
    expect(admin('key', 'rotate', '--key', server.key).err).toMatchObject({ status: 404 });
    // A guard naming another store: 422, nothing rotated.
    expect(admin('key', 'rotate', '--key', rotated.out.key, '--store', String(store.storeId + 1)).err).toMatchObject({ status: 422 });
    expect((await claim(rotated.out.key)).status).toBe(200);
    // Deleting the server revokes the rotated key too (its entry under the server was moved).
    expect((await store.delete(`/v1/app/server/${server.id}`)).status).toBe(204);
    expect((await claim(rotated.out.key)).status).toBe(401);
    expect(admin('key', 'list', '--store', String(store.storeId)).out.data.filter((entry: { server_id: number | null }) => entry.server_id === server.id)).toEqual([]);
  });

  it('rotates an identify key, keeping its scopes, and refuses to rotate a token as a key', () => {
    const store = admin('store', 'create', '--name', 'Rotate shop', '--domain', domain()).out;
    const key = admin('key', 'create', '--store', String(store.store_id), '--scope', 'customers:identify').out;
    const rotated = admin('key', 'rotate', '--key', key.key, '--store', String(store.store_id)).out;
    expect(rotated).toMatchObject({ store_id: store.store_id, scopes: ['customers:identify'], replaced: key.credential_id });
    expect(admin('key', 'list', '--store', String(store.store_id)).out.data.map((entry: { id: number }) => entry.id)).toEqual([rotated.credential_id]);
    expect(admin('key', 'revoke', '--key', key.key).err).toMatchObject({ status: 404 });
    expect(admin('key', 'rotate', '--key', store.api_token).err).toMatchObject({ status: 404 });
  });
});
