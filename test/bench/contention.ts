import { seededRandom } from '../chaos/proxy.ts';

/**
 * `npm run bench` (last part), or `npx tsx test/bench/contention.ts`: where one store's concurrent
 * order writes start to fail on AWS because their transactions meet on one item (issue 24 item 4).
 * DynamoDB Local runs one request at a time and never reports a TransactionConflict, so this is a
 * model, simulated, not a measurement. The model:
 *
 * - order writes (a create, an approval, a cancel...: a paid order is two) arrive at random
 *   (Poisson) at `rate` a second in one store;
 * - each is a TransactWriteItems that holds its items for its time on AWS (a profile: 25 ms each,
 *   or one write in ten an approval of many commands holding 150 ms); an attempt that finds one
 *   of its items held by another
 *   transaction in flight is cancelled (TransactionConflict) after the same time, and nothing of it
 *   is written;
 * - a cancelled attempt is tried again as lib/db/transact.ts `retrying` does: 8 attempts in all,
 *   waiting a random time up to 10 x 2^round ms before each retry; the 8th cancellation is a 503;
 * - the items every write holds: the order's counts (`single`: the one `COUNT#<s> / ORDER` item of
 *   before; `16 shards`: one of 16, chosen by the order id, here at random as approvals of any
 *   order do) and, in the last column, one package item every order holds too (a store selling one
 *   package: its stock ADD or the ConditionCheck of an unlimited package, lib/db/reservation.ts).
 *
 * Each cell is p99 latency of a write (ms, retries and waits included) / share answered 503, over
 * BENCH_CONTENTION_SECONDS (60) simulated seconds, seeded (the same figures every run). The
 * ceiling is the highest rate of the grid with p99 under CEILING_P99_MS and no 503.
 */
const SIMULATED_SECONDS = Number(process.env.BENCH_CONTENTION_SECONDS ?? 60);
/** How long a write's transaction holds its items: an order's usual transaction on AWS, and a mix with large approvals (97 commands and their chain). */
const HOLD_PROFILES: { label: string; holdMs: (random: () => number) => number }[] = [
  { label: 'each transaction holding its items 25 ms', holdMs: () => 25 },
  { label: 'one write in ten a large approval holding its items 150 ms, the others 25 ms', holdMs: (random) => (random() < 0.1 ? 150 : 25) },
];
const RATES = [5, 10, 15, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640];
/** As lib/db/transact.ts: MAX_ATTEMPTS and the full-jitter wait before retry `round`. */
const MAX_ATTEMPTS = 8;
const retryWaitMs = (round: number, random: () => number) => random() * 10 * 2 ** round;
const CEILING_P99_MS = 400;
const SHARDS = 16;

interface Scenario {
  label: string;
  /** The hot items one write holds. */
  items: (random: () => number) => string[];
}

const SCENARIOS: Scenario[] = [
  { label: 'single counter', items: () => ['COUNT'] },
  { label: `${SHARDS} shards`, items: (random) => [`COUNT#SHARD#${Math.floor(random() * SHARDS)}`] },
  { label: `${SHARDS} shards + 1 package`, items: (random) => [`COUNT#SHARD#${Math.floor(random() * SHARDS)}`, 'PACKAGE'] },
];

interface Attempt {
  at: number;
  write: number;
  round: number;
}

/** A binary heap of attempts by start time: the simulation takes them in the order they happen. */
class Timeline {
  private heap: Attempt[] = [];
  push(attempt: Attempt) {
    const heap = this.heap;
    heap.push(attempt);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= heap[i]!.at) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }
  pop(): Attempt | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        const right = left + 1;
        let least = i;
        if (left < heap.length && heap[left]!.at < heap[least]!.at) least = left;
        if (right < heap.length && heap[right]!.at < heap[least]!.at) least = right;
        if (least === i) break;
        [heap[least], heap[i]] = [heap[i]!, heap[least]!];
        i = least;
      }
    }
    return top;
  }
}

interface Outcome {
  p99: number;
  failedShare: number;
  attemptsPerWrite: number;
}

function simulate(scenario: Scenario, rate: number, profile: (typeof HOLD_PROFILES)[number], seed: number): Outcome {
  const random = seededRandom(rate * 7919 + seed);
  const arrivals: number[] = [];
  const itemsOf: string[][] = [];
  const holdOf: number[] = [];
  const timeline = new Timeline();
  for (let at = 0; ; ) {
    at += (-Math.log(1 - random()) / rate) * 1000;
    if (at > SIMULATED_SECONDS * 1000) break;
    timeline.push({ at, write: arrivals.length, round: 1 });
    arrivals.push(at);
    itemsOf.push(scenario.items(random));
    holdOf.push(profile.holdMs(random));
  }
  const heldUntil = new Map<string, number>();
  const latencies: number[] = [];
  let failed = 0;
  let attempts = 0;
  for (let attempt = timeline.pop(); attempt; attempt = timeline.pop()) {
    attempts += 1;
    const items = itemsOf[attempt.write]!;
    const conflict = items.some((item) => (heldUntil.get(item) ?? 0) > attempt.at);
    const done = attempt.at + holdOf[attempt.write]!;
    if (!conflict) {
      for (const item of items) heldUntil.set(item, done);
      latencies.push(done - arrivals[attempt.write]!);
    } else if (attempt.round >= MAX_ATTEMPTS) {
      failed += 1;
      latencies.push(done - arrivals[attempt.write]!);
    } else {
      timeline.push({ at: done + retryWaitMs(attempt.round, random), write: attempt.write, round: attempt.round + 1 });
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
    failedShare: arrivals.length ? failed / arrivals.length : 0,
    attemptsPerWrite: arrivals.length ? attempts / arrivals.length : 0,
  };
}

const cell = (outcome: Outcome) => `${outcome.p99.toFixed(0).padStart(5)} / ${(outcome.failedShare * 100).toFixed(1).padStart(4)}%`;

for (const [seed, profile] of HOLD_PROFILES.entries()) {
  console.log(`\nOne store's order writes, ${profile.label} (model: test/bench/contention.ts); p99 ms / 503s`);
  console.log(`${'writes/s'.padStart(8)}  ${SCENARIOS.map(({ label }) => label.padStart(21)).join('  ')}`);
  const ceilings = SCENARIOS.map(() => 0);
  // The ceiling is the last rate of the unbroken run of good ones from the lowest.
  const holding = SCENARIOS.map(() => true);
  for (const rate of RATES) {
    const outcomes = SCENARIOS.map((scenario) => simulate(scenario, rate, profile, seed));
    outcomes.forEach((outcome, index) => {
      holding[index] = holding[index]! && outcome.failedShare === 0 && outcome.p99 < CEILING_P99_MS;
      if (holding[index]) ceilings[index] = rate;
    });
    console.log(`${String(rate).padStart(8)}  ${outcomes.map((outcome) => `${cell(outcome)} (${outcome.attemptsPerWrite.toFixed(2)})`.padStart(21)).join('  ')}`);
  }
  console.log(`ceiling (p99 < ${CEILING_P99_MS} ms, no 503): ${SCENARIOS.map(({ label }, index) => `${label} ${ceilings[index]}/s`).join(', ')}`);
  console.log('(in parentheses: attempts per write)');
}
