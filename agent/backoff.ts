/**
 * Waits that grow while something stays down (1 s, 2 s, 4 s ... 60 s) and start over once it
 * answers, each spread by +-20 % so that agents that lost the API together do not come back in
 * step. `random` is a parameter so that a test can pin it.
 */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly firstMs = 1000,
    private readonly maxMs = 60_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The wait before the next try, counting this failure. */
  next(): number {
    const base = Math.min(this.maxMs, this.firstMs * 2 ** this.failures);
    this.failures++;
    return jitter(base, this.random);
  }

  reset(): void {
    this.failures = 0;
  }

  get failing(): boolean {
    return this.failures > 0;
  }
}

/** `ms` spread by +-20 %. */
export const jitter = (ms: number, random: () => number = Math.random) => Math.round(ms * (0.8 + 0.4 * random()));
