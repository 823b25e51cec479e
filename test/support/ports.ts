import { createServer } from 'node:net';

/** A TCP port free on loopback right now, so that test and bench stacks never collide with `npm start`. */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
