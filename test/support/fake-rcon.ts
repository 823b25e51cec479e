import { createServer, type Server, type Socket } from 'node:net';

/**
 * A game server as the delivery agent sees it: the Source RCON protocol over TCP
 * (https://developer.valvesoftware.com/wiki/Source_RCON_Protocol), as Minecraft Java speaks it.
 *
 * Packets are `int32 size | int32 id | int32 type | body | 0x00 0x00`, little-endian. The client
 * authenticates with type 3 (SERVERDATA_AUTH) and gets type 2 (AUTH_RESPONSE) with its id, or id -1
 * for a wrong password; a Source engine server (`srcdsAuth`) sends an empty type 0 packet first.
 * Commands are type 2 (EXECCOMMAND); each answer is one or more type 0 (RESPONSE_VALUE) packets of at
 * most `maxBody` bytes carrying the command's id, as Minecraft splits answers over 4096 bytes.
 * Several packets go out in one write, so a client must frame them by their size field.
 */
export interface FakeRconOptions {
  password: string;
  /** Body bytes per answer packet (Minecraft: 4096). */
  maxBody?: number;
  /** Send the Source engine's empty RESPONSE_VALUE before each AUTH_RESPONSE. */
  srcdsAuth?: boolean;
}

export interface ExecutedCommand {
  command: string;
  at: number;
}

const AUTH = 3;
const EXEC_OR_AUTH_RESPONSE = 2;
const RESPONSE_VALUE = 0;

export function encodePacket(id: number, type: number, body: string | Buffer): Buffer {
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const packet = Buffer.alloc(14 + payload.length);
  packet.writeInt32LE(10 + payload.length, 0);
  packet.writeInt32LE(id, 4);
  packet.writeInt32LE(type, 8);
  payload.copy(packet, 12);
  return packet;
}

/**
 * What the game answers to one command: text (now, or after `delayMs`), `'silence'` (never
 * answers), `'drop'` (closes the connection), or `'down'` (the game dies: every connection closed
 * and no new one accepted until `start` again).
 */
export type Answer = string | { text: string; delayMs: number } | 'silence' | 'drop' | 'down';

export class FakeRconServer {
  readonly executed: ExecutedCommand[] = [];
  /** Players the `list` command reports (Minecraft's wording). */
  players: string[] = [];
  /** Authentication attempts, right or wrong. */
  authAttempts = 0;
  connections = 0;
  private server: Server | undefined;
  private sockets = new Set<Socket>();
  private answers = new Map<string, Answer>();
  private nextAnswers: Answer[] = [];
  private portNumber = 0;

  constructor(private readonly options: FakeRconOptions) {}

  get port(): number {
    return this.portNumber;
  }

  /** Listens on `port` (0: any free one; a restart passes the old one back). */
  async start(port = this.portNumber): Promise<this> {
    const server = createServer((socket) => this.serve(socket));
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => done());
    });
    this.server = server;
    this.portNumber = (server.address() as { port: number }).port;
    return this;
  }

  /** Stops listening and cuts every open connection: the game server is down. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((done) => server.close(() => done()));
  }

  /** The answer to a command whose text starts with `prefix`, for every later run. */
  answer(prefix: string, answer: Answer): void {
    this.answers.set(prefix, answer);
  }

  /** The answers to the next game commands (not `list`), one each, before the standing ones. */
  answerNext(...answers: Answer[]): void {
    this.nextAnswers.push(...answers);
  }

  /** Commands run, without the `list` calls the agent makes before each claim. */
  get deliveries(): ExecutedCommand[] {
    return this.executed.filter((entry) => entry.command !== 'list');
  }

  private listAnswer(): string {
    return `There are ${this.players.length} of a max of 20 players online: ${this.players.join(', ')}`;
  }

  private answerFor(command: string): Answer {
    if (command === 'list') return this.listAnswer();
    const next = this.nextAnswers.shift();
    if (next !== undefined) return next;
    for (const [prefix, answer] of this.answers) if (command.startsWith(prefix)) return answer;
    return `ran: ${command}`;
  }

  private serve(socket: Socket): void {
    this.connections++;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let authenticated = false;
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32LE(0)) {
        const size = buffered.readInt32LE(0);
        const id = buffered.readInt32LE(4);
        const type = buffered.readInt32LE(8);
        const body = buffered.subarray(12, 4 + size - 2).toString('utf8');
        buffered = buffered.subarray(4 + size);
        if (type === AUTH) {
          this.authAttempts++;
          authenticated = body === this.options.password;
          const packets = [encodePacket(authenticated ? id : -1, EXEC_OR_AUTH_RESPONSE, '')];
          if (this.options.srcdsAuth) packets.unshift(encodePacket(id, RESPONSE_VALUE, ''));
          socket.write(Buffer.concat(packets));
          continue;
        }
        if (!authenticated) {
          // Minecraft drops a client that sends a command before authenticating.
          socket.destroy();
          return;
        }
        if (type !== EXEC_OR_AUTH_RESPONSE) {
          socket.write(encodePacket(id, RESPONSE_VALUE, `Unknown request ${type.toString(16)}`));
          continue;
        }
        const answer = this.answerFor(body);
        if (answer === 'drop' || answer === 'down') {
          socket.destroy();
          if (answer === 'down') void this.stop();
          return;
        }
        this.executed.push({ command: body, at: Date.now() });
        if (answer === 'silence') continue;
        const reply = (text: string) => socket.write(Buffer.concat(this.split(text).map((part) => encodePacket(id, RESPONSE_VALUE, part))));
        if (typeof answer === 'string') reply(answer);
        else setTimeout(() => socket.writable && reply(answer.text), answer.delayMs);
      }
    });
  }

  private split(answer: string): Buffer[] {
    const bytes = Buffer.from(answer, 'utf8');
    const max = this.options.maxBody ?? 4096;
    const parts: Buffer[] = [];
    for (let offset = 0; offset < bytes.length || parts.length === 0; offset += max) parts.push(bytes.subarray(offset, offset + max));
    return parts;
  }
}

export const startFakeRcon = (options: FakeRconOptions) => new FakeRconServer(options).start(0);
