/**
 * A reference delivery agent: what a game-server plugin does to run a store's commands.
 *
 *   npm run delivery-agent -- --key sak_... [--api http://127.0.0.1:3000/v1] [--online Steve,Alex]
 *
 * The loop: claim (POST /delivery/claim) -> run each command, in the order handed out -> ack the
 * results (POST /delivery/ack) -> claim again; when nothing is due, wait a few seconds. The store
 * guarantees that a command is handed to one lease at a time and that the commands of an order
 * come in order; the agent's part is to ack what it ran before the lease ends (60 s by default),
 * and to report a failure as FAILED so the store retries it later (30 s, 60 s, ... up to 1 h; the
 * 5th failure is DEAD and waits for the operator).
 *
 * Plug your server in through `execute` (the default prints the command) and `online` (the players
 * connected now: commands with offline_execute false are handed out only for them).
 */
export interface ClaimedCommand {
  id: number;
  order_id: number;
  attempt: number;
  command: string;
  offline_execute: boolean;
  execute_at: string;
  order: { client_identifier: string; client_name: string; client_email: string; internal_id: string };
}

/** Runs one command on the game server; throwing or `ok: false` reports it FAILED. */
export type Executor = (command: ClaimedCommand) => Promise<{ ok: boolean; output?: string }>;

export const printExecutor: Executor = async (command) => {
  console.log(`[order ${command.order_id}] #${command.id} (attempt ${command.attempt}): ${command.command}`);
  return { ok: true, output: 'printed' };
};

export interface AgentOptions {
  api: string;
  key: string;
  execute?: Executor;
  online?: () => string[] | Promise<string[]>;
  /** Commands per claim (1-100). */
  limit?: number;
  leaseSeconds?: number;
  /** Wait between claims that hand out nothing. */
  idleMs?: number;
  signal?: AbortSignal;
}

/** The store answers 2,000 characters of response at most. */
const RESPONSE_MAX = 2000;

async function post<T>(options: AgentOptions, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${options.api}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** One round: claim, run, ack. Answers how many commands it ran. */
export async function runOnce(options: AgentOptions): Promise<number> {
  const execute = options.execute ?? printExecutor;
  const claim = await post<{ lease_id: string | null; commands: ClaimedCommand[] }>(options, '/delivery/claim', {
    online: (await options.online?.()) ?? [],
    limit: options.limit ?? 50,
    lease_seconds: options.leaseSeconds ?? 60,
  });
  if (claim.lease_id === null) return 0;
  const results = [];
  for (const command of claim.commands) {
    try {
      const { ok, output } = await execute(command);
      results.push({ id: command.id, status: ok ? 'DONE' : 'FAILED', response: output?.slice(0, RESPONSE_MAX) });
    } catch (error) {
      results.push({ id: command.id, status: 'FAILED', response: String((error as Error).message ?? error).slice(0, RESPONSE_MAX) });
    }
  }
  const ack = await post<{ rejected: { id: number; reason: string }[] }>(options, '/delivery/ack', { lease_id: claim.lease_id, results });
  // LEASE_LOST: the lease ran out and another claim took the command; it will be run there.
  for (const { id, reason } of ack.rejected) console.warn(`ack of command ${id} refused: ${reason}`);
  return claim.commands.length;
}

/** Claims until `signal` aborts; an error (network, 5xx) waits and tries again. */
export async function runAgent(options: AgentOptions): Promise<void> {
  const idle = options.idleMs ?? 5000;
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  while (!options.signal?.aborted) {
    try {
      if ((await runOnce(options)) === 0) await wait(idle);
    } catch (error) {
      console.error(String(error));
      await wait(idle);
    }
  }
}

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? undefined : process.argv[index + 1];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const key = flag('key');
  if (!key) {
    console.error('usage: npm run delivery-agent -- --key sak_... [--api http://127.0.0.1:3000/v1] [--online Steve,Alex]');
    process.exit(2);
  }
  const players = (flag('online') ?? '').split(',').filter(Boolean);
  const stop = new AbortController();
  process.on('SIGINT', () => stop.abort());
  await runAgent({ api: flag('api') ?? 'http://127.0.0.1:3000/v1', key, online: () => players, signal: stop.signal });
}
