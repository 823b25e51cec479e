import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The store API as a game server's agent reaches it over a network that fails: a proxy in front of
 * the local stack that forwards every request, or, when told, cuts connections (the API is down)
 * or answers 503 to the next requests of a path, or lets the next requests of a path through and
 * cuts the connection before their answer reaches the agent (the request done, its answer lost).
 */
export class FlakyApi {
  /** `down`: every connection is cut before an answer, as when the host is unreachable. */
  down = false;
  readonly requests: { path: string; status: number | 'cut'; idempotencyKey?: string; replayed?: boolean }[] = [];
  private failures = new Map<string, number>();
  private lostAnswers = new Map<string, number>();
  private server: Server | undefined;
  private sockets = new Set<Socket>();

  /** `target`: the API origin (http://host:port), without /v1. */
  constructor(private readonly target: string) {}

  /** Answers 503 (with the store's envelope) to the next `count` requests whose path ends with `suffix`. */
  fail(suffix: string, count: number): void {
    this.failures.set(suffix, count);
  }

  /** Forwards the next `count` requests whose path ends with `suffix`, then cuts the connection instead of answering. */
  loseAnswer(suffix: string, count: number): void {
    this.lostAnswers.set(suffix, count);
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => void this.forward(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => this.server?.close(() => done()));
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/';
    if (this.down) {
      this.requests.push({ path, status: 'cut' });
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const suffix = [...this.failures.keys()].find((candidate) => path.endsWith(candidate));
    if (suffix && this.failures.get(suffix)! > 0) {
      this.failures.set(suffix, this.failures.get(suffix)! - 1);
      this.requests.push({ path, status: 503 });
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ errors: [{ message: 'Service unavailable' }] }));
      return;
    }
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    const answer = await fetch(`${this.target}${path}`, {
      method: req.method,
      headers: {
        authorization: req.headers.authorization ?? '',
        'content-type': req.headers['content-type'] ?? 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    const losing = [...this.lostAnswers.keys()].find((candidate) => path.endsWith(candidate));
    if (losing && this.lostAnswers.get(losing)! > 0) {
      this.lostAnswers.set(losing, this.lostAnswers.get(losing)! - 1);
      await answer.arrayBuffer();
      this.requests.push({ path, status: 'cut', idempotencyKey, replayed });
      req.socket.destroy();
      return;
    }
    this.requests.push({ path, status: answer.status, idempotencyKey, replayed });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  }
}
