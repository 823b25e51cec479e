import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConnectedAddress, postWebhook, resolvesToPublic, type Resolve } from '#lib/flows/webhook-post.ts';

/**
 * The sender's address checks (extensions section 12), against real sockets on this machine:
 * a receiver on 127.0.0.1 counts every connection it gets, and a resolver handed in points a
 * name at any address, as a DNS record would.
 */
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

async function receiver(host = '127.0.0.1', answer: (res: import('node:http').ServerResponse) => void = (res) => res.end('ok')) {
  const seen = { connections: 0, requests: 0 };
  const server = createServer((_req, res) => {
    seen.requests += 1;
    answer(res);
  });
  server.on('connection', () => (seen.connections += 1));
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, host, done));
  return { seen, port: (server.address() as AddressInfo).port };
}

const resolvingTo =
  (...addresses: string[]): Resolve =>
  (_hostname, callback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );

const send = (url: string, resolve?: Resolve) => postWebhook(url, '{}', { 'content-type': 'application/json' }, { timeoutMs: 2000, checkAddress: true, resolve });

// One address of each refused range, in each form a resolver may give it.
const inward = [
  '127.0.0.1',
  '10.0.0.1',
  '172.16.0.1',
  '192.168.0.1',
  '100.64.0.1',
  '169.254.169.254',
  '0.0.0.0',
  '224.0.0.1',
  '::1',
  'fe80::1',
  'fd00:ec2::254',
  '::ffff:127.0.0.1',
  '::ffff:0:7f00:1',
  '::a9fe:a9fe',
  '64:ff9b::7f00:1',
  '2002:a00:1::',
];

describe('webhook sender: the address connected to', () => {
  it('an IP literal is judged before connecting (node skips lookup for literals): nothing reaches a receiver on 127.0.0.1', async () => {
    const { seen, port } = await receiver();
    const result = await send(`http://127.0.0.1:${port}/hook`);
    expect(result).toMatchObject({ status_code: null, error: 'blocked address' });
    expect(seen.connections).toBe(0);
  });

  it.each(['[::1]', '[::ffff:7f00:1]', '[::7f00:1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]', '2130706433', '0x7f.1'])('the literal %s is refused', async (host) => {
    expect(await send(`https://${host}/hook`)).toMatchObject({ status_code: null, error: 'blocked address' });
  });

  it.each(inward)('a name resolving to %s fails the attempt and never connects', async (address) => {
    const { seen, port } = await receiver();
    const result = await send(`http://hooks.example.test:${port}/hook`, resolvingTo(address));
    expect(result).toMatchObject({ status_code: null, error: 'blocked address' });
    expect(seen.connections).toBe(0);
  });

  it('a name with one public and one inward address is refused whole (no pick between them)', async () => {
    const { seen, port } = await receiver();
    expect(await send(`http://hooks.example.test:${port}/hook`, resolvingTo('8.8.8.8', '127.0.0.1'))).toMatchObject({ error: 'blocked address' });
    expect(seen.connections).toBe(0);
    expect(await resolvesToPublic('hooks.example.test', resolvingTo('8.8.8.8', '::ffff:0:a9fe:a9fe'))).toBe(false);
    expect(await resolvesToPublic('hooks.example.test', resolvingTo('8.8.8.8', '2606:4700::1111'))).toBe(true);
    // An IP literal resolves to itself (no DNS asked): a public IPv6 literal passes, an inward one does not.
    expect(await resolvesToPublic('2606:4700::1111')).toBe(true);
    expect(await resolvesToPublic('::ffff:7f00:1')).toBe(false);
  });

  it('a socket that reached an inward address is destroyed on connect, before anything written on it leaves', async () => {
    let received = 0;
    const { port } = await receiver();
    const server = servers[0]!;
    server.on('connection', (socket) => socket.on('data', (chunk: Buffer) => (received += chunk.length)));
    const socket = connect({ host: '127.0.0.1', port });
    checkConnectedAddress(socket);
    socket.write('POST /hook HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}');
    const error = await new Promise<NodeJS.ErrnoException>((done) => socket.on('error', done));
    expect(error.code).toBe('EADDRBLOCKED');
    await new Promise((done) => setTimeout(done, 100));
    expect(received).toBe(0);
  });

  it('a redirect is never followed: a 302 to the metadata address is a failed attempt, and its target gets nothing', async () => {
    const target = await receiver('127.0.0.2');
    const { seen } = await receiver('127.0.0.1', (res) => {
      res.writeHead(302, { location: `http://127.0.0.2:${target.port}/latest/meta-data` });
      res.end();
    });
    const port = (servers[1]!.address() as AddressInfo).port;
    // The first hop is a local receiver, so the address check is off: what is tested is that no redirect is taken at all.
    const result = await postWebhook(`http://127.0.0.1:${port}/hook`, '{}', {}, { timeoutMs: 2000, checkAddress: false });
    expect(result).toMatchObject({ status_code: 302, error: null });
    expect(seen.requests).toBe(1);
    expect(target.seen.connections).toBe(0);
  });
});
