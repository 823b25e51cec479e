import { Rcon } from 'rcon-client';

/**
 * The game server's console over RCON (the Source RCON protocol), through rcon-client: it frames
 * packets by their size field, times out each request, and fails every waiting request when the
 * connection closes (rcon-srcds 2.1.1 hangs in those three cases; see docs/delivery-agent.md).
 * One connection, reused while it lives, opened again on the next command after it dropped.
 */
export interface GameTarget {
  host: string;
  port: number;
  password: string;
}

export interface GameAnswer {
  text: string;
  /**
   * False when the answer filled a whole packet: Minecraft splits answers at 4,096 bytes and
   * rcon-client keeps the first packet, so more may have followed.
   */
  complete: boolean;
}

/** Why a command could not run, in words for the ack's `response` and the operator's log. */
export class GameUnavailable extends Error {}

/** Section 14: a command the game has not answered in 5 s is FAILED. */
export const RCON_TIMEOUT_MS = 5000;
/** The body of one Minecraft answer packet. */
const PACKET_BODY_MAX = 4096;
const RESPONSE_VALUE = 0;

/**
 * rcon-client takes the first packet after an auth request as the auth answer. A Source engine
 * server (Counter-Strike and the other Valve games) sends an empty RESPONSE_VALUE before the
 * AUTH_RESPONSE, so any password would pass: skip RESPONSE_VALUE packets until authenticated.
 */
class SourceRcon extends Rcon {}
// biome-ignore lint/complexity/useLiteralKeys: handlePacket is private in rcon-client's types; brackets are TypeScript's way in.
const handlePacket = Rcon.prototype['handlePacket'];
Object.defineProperty(SourceRcon.prototype, 'handlePacket', {
  value(this: Rcon, packet: Buffer) {
    if (!this.authenticated && packet.readInt32LE(8) === RESPONSE_VALUE) return;
    handlePacket.call(this, packet);
  },
});

export class GameConsole {
  private connection: Rcon | undefined;

  constructor(
    private readonly target: GameTarget,
    private readonly timeoutMs = RCON_TIMEOUT_MS,
  ) {}

  get address(): string {
    return `${this.target.host}:${this.target.port}`;
  }

  /** Runs one command; a refused, silent or dropped connection throws GameUnavailable with the reason. */
  async run(command: string): Promise<GameAnswer> {
    const rcon = await this.connect();
    try {
      const payload = await rcon.sendRaw(Buffer.from(command, 'utf8'));
      return { text: payload.toString('utf8'), complete: payload.length < PACKET_BODY_MAX };
    } catch (error) {
      // A late answer on a connection that timed out could be taken for the next command's: start afresh.
      this.close();
      throw new GameUnavailable(describe(error, this.address, this.timeoutMs));
    }
  }

  close(): void {
    const rcon = this.connection;
    this.connection = undefined;
    rcon?.socket?.destroy();
  }

  private async connect(): Promise<Rcon> {
    if (this.connection?.authenticated && this.connection.socket) return this.connection;
    this.close();
    const rcon = new SourceRcon({ ...this.target, timeout: this.timeoutMs });
    // A socket error with no listener would end the process; the waiting request reports it instead.
    rcon.on('error', () => {});
    rcon.on('end', () => {
      if (this.connection === rcon) this.connection = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        rcon.connect(),
        new Promise((_, fail) => {
          timer = setTimeout(() => fail(new Error('connect timeout')), this.timeoutMs);
        }),
      ]);
    } catch (error) {
      rcon.socket?.destroy();
      const silent = ((error as Error).message ?? '').startsWith('Timeout for packet');
      throw new GameUnavailable(silent ? `no answer to the RCON login from ${this.address} within ${this.timeoutMs / 1000} s` : describe(error, this.address, this.timeoutMs));
    } finally {
      clearTimeout(timer);
    }
    this.connection = rcon;
    return rcon;
  }
}

function describe(error: unknown, address: string, timeoutMs: number): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = (error as Error).message ?? String(error);
  if (code === 'ECONNREFUSED') return `game server refused the RCON connection (${address}): is it running with RCON enabled?`;
  if (code) return `RCON connection to ${address} failed: ${code}`;
  if (message === 'Authentication failed') return `game server refused the RCON password (${address})`;
  if (message === 'connect timeout') return `no RCON connection to ${address} within ${timeoutMs / 1000} s`;
  if (message.startsWith('Timeout for packet')) return `game server did not answer within ${timeoutMs / 1000} s (the command may have run)`;
  if (message === 'Connection closed' || message === 'Not connected') return `RCON connection to ${address} dropped`;
  return `RCON: ${message}`;
}
