import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/*
 * What the fake providers (fake-mercadopago.ts, fake-stripe.ts, fake-paypal.ts) share: their
 * loopback server, the outages a test makes them suffer, and taking in turn, with the other test
 * files, the one port the local stack names for a provider (MERCADOPAGO_API_URL, STRIPE_API_URL,
 * PAYPAL_API_URL).
 */

/** An HTTP server of `serve` on 127.0.0.1:`port` (0: any free port); a port in use rejects with EADDRINUSE. */
export async function listenOnLoopback(serve: (req: IncomingMessage, res: ServerResponse) => Promise<void>, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      done();
    });
  });
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** Closes the server and its open connections (a keep-alive socket would hold the port). */
export async function closeServer(server: Server | undefined): Promise<void> {
  server?.closeAllConnections();
  await new Promise<void>((done) => server?.close(() => done()) ?? done());
}

/**
 * A fake started on the one port the local stack names, once no other test file holds it: files
 * run in parallel, and each that needs the stack to reach the provider takes the port in turn, for
 * the whole file (`stop()` gives it back).
 */
export async function takePort<Fake>(start: () => Promise<Fake>, waitMs: number): Promise<Fake> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await start();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || Date.now() > until) throw error;
      await new Promise((wait) => setTimeout(wait, 250));
    }
  }
}

/** What every fake provider can be told to suffer: `down` drops connections, `slow` answers after `slowMs`, `error` is the provider's 500. */
export type OutageKind = 'down' | 'slow' | 'error';

/**
 * A fake provider's HTTP side: its loopback server (`start`, `stop`, `url`) and the outages a test
 * makes it suffer (`fail`, `recover`). A fake serves each request with `serve`, which asks
 * `outageTook` first; `Extra` names the outages of its own beyond `OutageKind` (Stripe's `busy`).
 */
export abstract class ProviderFakeServer<Extra extends string = never> {
  private server: Server | undefined;
  private outage: { kind: OutageKind | Extra; times: number } | null = null;
  slowMs = 1_000;
  url = '';

  protected abstract serve(req: IncomingMessage, res: ServerResponse): Promise<void>;

  /** On `port` when given: the port the local stack names for the provider (test/integration/global-setup.ts). */
  async start(onPort = 0): Promise<this> {
    ({ server: this.server, url: this.url } = await listenOnLoopback((req, res) => this.serve(req, res), onPort));
    return this;
  }

  stop(): Promise<void> {
    return closeServer(this.server);
  }

  /** The next `times` requests fail this way (Infinity: until `recover`). */
  fail(kind: OutageKind | Extra, times = Infinity): void {
    this.outage = { kind, times };
  }

  recover(): void {
    this.outage = null;
  }

  /**
   * Suffers the outage due on this request, if any: true when the request is done with (its
   * connection dropped, or answered by `answer` with the provider's own error for `kind`), false
   * when it is to be served as usual (no outage, or after a `slow` wait).
   */
  protected async outageTook(req: IncomingMessage, res: ServerResponse, answer: (kind: Exclude<OutageKind | Extra, 'down' | 'slow'>) => void): Promise<boolean> {
    if (!this.outage || this.outage.times <= 0) return false;
    this.outage.times -= 1;
    const { kind } = this.outage;
    if (this.outage.times === 0) this.outage = null;
    if (kind === 'down') {
      req.socket.destroy();
      return true;
    }
    if (kind === 'slow') {
      await new Promise((done) => setTimeout(done, this.slowMs));
      return res.destroyed;
    }
    answer(kind as Exclude<OutageKind | Extra, 'down' | 'slow'>);
    return true;
  }
}
