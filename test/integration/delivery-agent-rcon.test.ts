import { afterEach, describe, expect, it } from 'vitest';
import { GameConsole, GameUnavailable } from '../../agent/game.ts';
import { FakeRconServer, type FakeRconOptions } from '../support/fake-rcon.ts';
import { freePort } from '../support/ports.ts';

/** The agent's RCON side (agent/game.ts over rcon-client) against a fake game speaking Source RCON. */
const servers: FakeRconServer[] = [];
const consoles: GameConsole[] = [];
afterEach(async () => {
  for (const console of consoles.splice(0)) console.close();
  for (const server of servers.splice(0)) await server.stop();
});

async function game(options: Partial<FakeRconOptions> = {}) {
  const server = await new FakeRconServer({ password: 'right', ...options }).start(0);
  servers.push(server);
  return server;
}

const consoleOf = (server: FakeRconServer, password = 'right', timeoutMs = 1000) => {
  const console = new GameConsole({ host: '127.0.0.1', port: server.port, password }, timeoutMs);
  consoles.push(console);
  return console;
};

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(GameUnavailable);
  return (error as Error).message;
};

describe('RCON to the game server', () => {
  it('authenticates once and runs commands on one connection, answers in UTF-8', async () => {
    const server = await game();
    server.answer('tellraw', '§aThanks ✓');
    const console = consoleOf(server);
    expect(await console.run('say one')).toEqual({ text: 'ran: say one', complete: true });
    expect(await console.run('tellraw Steve')).toEqual({ text: '§aThanks ✓', complete: true });
    expect(server.authAttempts).toBe(1);
    expect(server.connections).toBe(1);
  });

  it('refuses a wrong password (Minecraft: an auth answer with id -1), and runs nothing', async () => {
    const server = await game();
    expect(await failure(consoleOf(server, 'wrong').run('give Steve diamond'))).toBe(`game server refused the RCON password (127.0.0.1:${server.port})`);
    expect(server.executed).toEqual([]);
  });

  it('refuses a wrong password on a Source engine server too, whose empty packet before the auth answer rcon-client alone takes for success', async () => {
    const server = await game({ srcdsAuth: true });
    expect(await failure(consoleOf(server, 'wrong').run('give Steve diamond'))).toBe(`game server refused the RCON password (127.0.0.1:${server.port})`);
    expect(server.executed).toEqual([]);
    expect(await consoleOf(server, 'right').run('status')).toEqual({ text: 'ran: status', complete: true });
  });

  it('takes the first packet of a multi-packet answer, says it may go on, and keeps the next answer apart', async () => {
    const server = await game();
    server.answer('banlist', `${'a'.repeat(4096)}${'b'.repeat(4096)}tail`);
    const console = consoleOf(server);
    expect(await console.run('banlist')).toEqual({ text: 'a'.repeat(4096), complete: false });
    expect(await console.run('say next')).toEqual({ text: 'ran: say next', complete: true });
  });

  it('reports a dropped connection, then connects afresh for the next command', async () => {
    const server = await game();
    server.answerNext('drop');
    const console = consoleOf(server);
    expect(await failure(console.run('give Steve diamond'))).toBe(`RCON connection to 127.0.0.1:${server.port} dropped`);
    expect(await console.run('give Steve diamond')).toEqual({ text: 'ran: give Steve diamond', complete: true });
    expect(server.connections).toBe(2);
  });

  it('gives up on a silent game after the timeout and does not take its late answer for the next one', async () => {
    const server = await game();
    server.answerNext({ text: 'late answer', delayMs: 400 });
    const console = consoleOf(server, 'right', 200);
    const started = Date.now();
    expect(await failure(console.run('save-all'))).toBe('game server did not answer within 0.2 s (the command may have run)');
    expect(Date.now() - started).toBeLessThan(1000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await console.run('say next')).toEqual({ text: 'ran: say next', complete: true });
  });

  it('reports a game server that is not listening', async () => {
    const port = await freePort();
    const console = new GameConsole({ host: '127.0.0.1', port, password: 'right' });
    consoles.push(console);
    expect(await failure(console.run('list'))).toBe(`game server refused the RCON connection (127.0.0.1:${port}): is it running with RCON enabled?`);
  });
});
