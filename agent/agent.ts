import { ApiRefused, type AckResult, type ClaimedCommand, type StoreApi } from './api.ts';
import { Backoff, jitter } from './backoff.ts';
import { GameUnavailable, RCON_TIMEOUT_MS, type GameAnswer } from './game.ts';
import { noJournal, type Journal, type PendingResult } from './journal.ts';
import { parseOnline, type OnlineParser } from './online.ts';

/**
 * The delivery loop of extensions section 14: ask the game who is online, claim with that list,
 * run the handed-out commands over RCON in the order given, ack each with the game's answer
 * (DONE) or the reason it could not run (FAILED), and start again.
 *
 * A result is never dropped: it is kept (and written to the journal) from the moment the command
 * ran until the store has answered its ack, and acks are retried with backoff while the API is
 * down. Nothing new is claimed until the last cycle's acks are in, because the store holds an
 * order's next command until the one before it is DONE.
 */
export interface Game {
  run(command: string): Promise<GameAnswer>;
  close(): void;
}

export interface AgentOptions {
  api: Pick<StoreApi, 'claim' | 'ack'>;
  game: Game;
  onlineCommand: string;
  onlineParser: OnlineParser;
  /** Wait between claims that hand out nothing (spread by +-20 %). */
  intervalMs: number;
  /** Commands per claim, and how long the store keeps them for this agent. */
  limit?: number;
  leaseSeconds?: number;
  journal?: Journal;
  /** One line per delivered command, and the agent's news (stdout). */
  log?: (line: string) => void;
  /** What went wrong and what the agent does about it (stderr). */
  warn?: (line: string) => void;
  /** First and longest wait of the reconnect backoff (1 s and 60 s). */
  backoffMs?: { first: number; max: number };
  random?: () => number;
  now?: () => number;
}

/** Section 9: an ack's `response` holds at most 2,000 characters. */
export const RESPONSE_MAX = 2000;
export const DEFAULT_LIMIT = 20;
/** Long enough for a whole claim of commands that each time out (20 x 5 s), with room to ack. */
export const DEFAULT_LEASE_SECONDS = 150;
/** A command is started only while the lease has this much left: time to run it and ack it. */
const LEASE_MARGIN_MS = RCON_TIMEOUT_MS + 5000;

export class DeliveryAgent {
  private readonly pending: PendingResult[];
  private readonly apiBackoff: Backoff;
  private readonly gameBackoff: Backoff;
  private readonly journal: Journal;
  private readonly log: (line: string) => void;
  private readonly warn: (line: string) => void;
  private readonly now: () => number;
  private stopping = false;
  private forced = false;
  private fatal: string | undefined;
  private flushing: Promise<void> | undefined;
  private readonly wakers = new Set<() => void>();
  private lastTrouble: string | undefined;

  constructor(private readonly options: AgentOptions) {
    const random = options.random ?? Math.random;
    const { first, max } = options.backoffMs ?? { first: 1000, max: 60_000 };
    this.apiBackoff = new Backoff(first, max, random);
    this.gameBackoff = new Backoff(first, max, random);
    this.journal = options.journal ?? noJournal;
    this.pending = this.journal.load();
    this.log = options.log ?? ((line) => console.log(line));
    this.warn = options.warn ?? ((line) => console.error(line));
    this.now = options.now ?? Date.now;
  }

  /** SIGINT / SIGTERM: run no new command, ack what ran, then `run` returns. */
  stop(): void {
    this.stopping = true;
    for (const wake of [...this.wakers]) wake();
  }

  /** A second signal: stop retrying the acks too (what is unacked stays in the journal). */
  forceStop(): void {
    this.forced = true;
    this.stop();
  }

  /**
   * Cycles until `stop`; answers the exit code: 0, or 1 when results are left unacked or the
   * API refused the key.
   */
  async run(): Promise<number> {
    await this.ackLeftovers();
    while (!this.stopping && !this.fatal) {
      let handedOut: number;
      try {
        handedOut = await this.cycle();
      } catch (error) {
        if (!(await this.survive(error))) break;
        continue;
      }
      // An order's next command is handed out once this one is DONE: claim again at once.
      if (handedOut === 0) await this.sleep(jitter(this.options.intervalMs, this.options.random));
    }
    return this.finish();
  }

  /** `--once`: one cycle and its acks. Answers the exit code. */
  async once(): Promise<number> {
    await this.ackLeftovers();
    let failed = false;
    try {
      if (!this.fatal) await this.cycle();
    } catch (error) {
      failed = true;
      this.warn(String((error as Error).message ?? error));
    }
    const code = await this.finish();
    return failed ? 1 : code;
  }

  /** Results of an earlier run kept in the journal: acked before anything new is claimed. */
  private ackLeftovers(): Promise<void> {
    if (this.pending.length > 0) this.log(`acking ${this.pending.length} result(s) left by the last run`);
    return this.acked();
  }

  /** One cycle: online, claim, run, ack. Answers how many commands the claim handed out. */
  async cycle(): Promise<number> {
    const online = await this.whoIsOnline();
    if (this.stopping) return 0;
    const leaseSeconds = this.options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    // Timed by this machine's clock from before the request: a skewed clock cannot stretch the lease.
    const leaseEnds = this.now() + leaseSeconds * 1000;
    const claim = await this.options.api.claim({ online, limit: this.options.limit ?? DEFAULT_LIMIT, lease_seconds: leaseSeconds });
    this.recovered('the API');
    this.apiBackoff.reset();
    if (claim.lease_id === null) return 0;
    for (const [index, command] of claim.commands.entries()) {
      // Not run, not acked: the store hands these out again when the lease lapses (no try counted).
      if (this.stopping || this.fatal) break;
      if (leaseEnds - this.now() < LEASE_MARGIN_MS) {
        this.warn(`the lease ends soon: ${claim.commands.length - index} command(s) left for a later claim`);
        break;
      }
      this.record(claim.lease_id, await this.deliver(command));
    }
    await this.acked();
    return claim.commands.length;
  }

  private async whoIsOnline(): Promise<string[]> {
    if (this.options.onlineParser.kind === 'none') return [];
    const answer = await this.options.game.run(this.options.onlineCommand);
    this.recovered('the game server');
    this.gameBackoff.reset();
    return parseOnline(this.options.onlineParser, answer.text, answer.complete);
  }

  private async deliver(command: ClaimedCommand): Promise<AckResult> {
    let result: AckResult;
    try {
      const answer = await this.options.game.run(command.command);
      result = { id: command.id, status: 'DONE', response: cut(answer.text, RESPONSE_MAX) };
    } catch (error) {
      const reason = error instanceof GameUnavailable ? error.message : `agent error: ${(error as Error).message ?? error}`;
      result = { id: command.id, status: 'FAILED', response: cut(reason, RESPONSE_MAX) };
    }
    const detail = result.status === 'DONE' ? `${command.command} -> ${oneLine(result.response)}` : `${command.command}: ${result.response}`;
    this.log(`order ${command.order_id} command ${command.id}: ${result.status} (attempt ${command.attempt}) ${detail}`);
    return result;
  }

  /** Keeps a result until its ack is answered, and starts acking it while the next command runs. */
  private record(leaseId: string, result: AckResult): void {
    this.pending.push({ lease_id: leaseId, result });
    this.journal.save(this.pending);
    void this.acked();
  }

  /** Resolves when every kept result is acked (or the agent is forced to stop or told its key is bad). */
  private async acked(): Promise<void> {
    // A result kept just as a flush ended is not in that flush: go round until none is left.
    while (this.pending.length > 0 && !this.forced && !this.fatal) {
      this.flushing ??= this.flush().finally(() => {
        this.flushing = undefined;
      });
      await this.flushing;
    }
  }

  private async flush(): Promise<void> {
    // An ack that got no answer is sent again as it was (the same results, so the same Idempotency-Key),
    // not with the results kept since: the store answers the retry from the key.
    let unanswered: PendingResult[] | undefined;
    while (this.pending.length > 0 && !this.forced && !this.fatal) {
      const oldestLease = this.pending[0]!.lease_id;
      const batch = unanswered ?? this.pending.filter((entry) => entry.lease_id === oldestLease).slice(0, 100);
      const leaseId = batch[0]!.lease_id;
      unanswered = undefined;
      try {
        const answer = await this.options.api.ack(
          leaseId,
          batch.map((entry) => entry.result),
        );
        this.recovered('the API');
        this.apiBackoff.reset();
        // LEASE_LOST: the lease lapsed and another claim took the command, or the operator took it back.
        for (const { id, reason } of answer.rejected) this.warn(`the store refused the ack of command ${id}: ${reason}`);
        this.forget(batch);
      } catch (error) {
        if (error instanceof ApiRefused) {
          if (error.badKey) {
            this.fatal = `the API refused the delivery key: ${error.message}`;
            break;
          }
          // The same body would be refused forever (the lease is gone): say what is lost, loudly.
          this.warn(`the store refused an ack (${error.message}); results not recorded: ${JSON.stringify(batch)}`);
          this.forget(batch);
          continue;
        }
        // Acks are finished even while stopping: only a forced stop gives them up.
        unanswered = batch;
        await this.pause(error, this.apiBackoff, 'acking', true);
      }
    }
  }

  private forget(batch: PendingResult[]): void {
    for (const entry of batch) this.pending.splice(this.pending.indexOf(entry), 1);
    this.journal.save(this.pending);
  }

  /** A failed cycle: wait with backoff and go on (true), or stop for good (false). */
  private async survive(error: unknown): Promise<boolean> {
    if (error instanceof ApiRefused) {
      if (error.badKey) {
        this.fatal = `the API refused the delivery key: ${error.message}`;
        return false;
      }
      await this.pause(error, this.apiBackoff, 'claiming');
      return true;
    }
    await this.pause(error, error instanceof GameUnavailable ? this.gameBackoff : this.apiBackoff, error instanceof GameUnavailable ? 'asking who is online' : 'claiming');
    return true;
  }

  private async pause(error: unknown, backoff: Backoff, doing: string, untilForced = false): Promise<void> {
    const wait = backoff.next();
    const message = (error as Error).message ?? String(error);
    this.lastTrouble = message;
    this.warn(`${doing}: ${message}; trying again in ${(wait / 1000).toFixed(wait < 1000 ? 2 : 1)} s`);
    await this.sleep(wait, untilForced);
  }

  private recovered(what: string): void {
    if (this.lastTrouble === undefined) return;
    this.lastTrouble = undefined;
    this.log(`${what} answers again`);
  }

  /** Waits `ms`; a stop cuts the wait short, or with `untilForced` only a forced stop does. */
  private sleep(ms: number, untilForced = false): Promise<void> {
    const interrupted = () => (untilForced ? this.forced : this.stopping);
    if (interrupted() || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        if (interrupted()) done();
      };
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(wake);
    });
  }

  private async finish(): Promise<number> {
    await this.acked();
    this.options.game.close();
    if (this.fatal) this.warn(this.fatal);
    if (this.pending.length > 0) {
      this.warn(`${this.pending.length} result(s) ran but are not acked (kept in the state file, if any): ${JSON.stringify(this.pending)}`);
      return 1;
    }
    return this.fatal ? 1 : 0;
  }
}

/** At most `max` UTF-16 units, as the store counts them, without splitting a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end);
}

const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 160)}...` : flat || '(no answer)';
};
