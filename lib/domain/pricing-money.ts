/*
 * Exact money arithmetic for the pricing engine (lib/domain/pricing.ts).
 *
 * Why not plain numbers: binary floating point cannot hold most decimal amounts, so products and
 * halves drift before rounding (4.35 x 50% is 2.1749999... as a double and rounds to 2.17; the
 * rule's answer is 2.18). Every input amount is therefore read as the exact decimal it was written
 * as (the shortest decimal that round-trips the double, which is what JSON carried), every
 * computation runs on exact fractions of BigInts, and every rounded amount is a whole number of
 * cents (a BigInt) until it is handed back as a number of currency units.
 */

/** An exact rational number `num / den`, `den > 0`. */
export interface Exact {
  num: bigint;
  den: bigint;
}

const DECIMAL_TEXT = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/** The exact decimal a finite number was written as (`0.1` is one tenth, not 0.1000000000000000055...). */
export function exact(value: number): Exact {
  if (!Number.isFinite(value)) throw new RangeError(`An amount must be a finite number, not ${value}`);
  const match = DECIMAL_TEXT.exec(String(Math.abs(value)));
  if (!match) throw new RangeError(`Unreadable amount ${value}`);
  const [, whole = '0', fraction = '', exponent = '0'] = match;
  const digits = BigInt(whole + fraction);
  const scale = fraction.length - Number(exponent);
  const num = scale >= 0 ? digits : digits * 10n ** BigInt(-scale);
  const den = scale >= 0 ? 10n ** BigInt(scale) : 1n;
  return { num: value < 0 ? -num : num, den };
}

export const ZERO: Exact = { num: 0n, den: 1n };
export const whole = (units: bigint | number): Exact => ({ num: BigInt(units), den: 1n });
export const fromCents = (cents: bigint): Exact => ({ num: cents, den: 100n });
export const sum = (a: Exact, b: Exact): Exact => ({ num: a.num * b.den + b.num * a.den, den: a.den * b.den });
export const difference = (a: Exact, b: Exact): Exact => sum(a, { num: -b.num, den: b.den });
export const product = (a: Exact, b: Exact): Exact => ({ num: a.num * b.num, den: a.den * b.den });
/** `percent`% of `amount`. */
export const percentOf = (amount: Exact, percent: Exact): Exact => ({ num: amount.num * percent.num, den: amount.den * percent.den * 100n });

/** -1, 0 or 1 as a is below, equal to or above b. */
export const compare = (a: Exact, b: Exact): number => {
  const delta = a.num * b.den - b.num * a.den;
  return delta < 0n ? -1 : delta > 0n ? 1 : 0;
};
export const smaller = (a: Exact, b: Exact): Exact => (compare(a, b) <= 0 ? a : b);
export const smallerCents = (a: bigint, b: bigint): bigint => (a <= b ? a : b);
export const sumCents = (amounts: readonly bigint[]): bigint => amounts.reduce((total, amount) => total + amount, 0n);

/** `num / den` rounded to a whole number, halves away from zero (`den > 0`). */
export function divideRounded(num: bigint, den: bigint): bigint {
  const magnitude = ((num < 0n ? -num : num) * 2n + den) / (den * 2n);
  return num < 0n ? -magnitude : magnitude;
}

/** The nearest whole cent, halves away from zero: 0.125 -> 13 cents, -0.125 -> -13 cents. */
export const toCents = (amount: Exact): bigint => divideRounded(amount.num * 100n, amount.den);

/** The smallest whole number not below the amount. */
export function ceilWhole(amount: Exact): bigint {
  return amount.num >= 0n ? (amount.num + amount.den - 1n) / amount.den : -(-amount.num / amount.den);
}

/** The smallest whole number of cents not below the amount. */
export const ceilCents = (amount: Exact): bigint => ceilWhole({ num: amount.num * 100n, den: amount.den });

/** Cents as currency units (1234n -> 12.34): the double nearest to the decimal, which prints as written. */
export const fromCentsToAmount = (cents: bigint): number => Number(cents) / 100;

/**
 * Shares `amount` cents among lines in proportion to `weights` (their amounts, in cents), as
 * section 8 says: each share rounded (halves away from zero), the last line takes the remainder.
 * The amount is capped at the weights' sum (a discount never exceeds what it applies to).
 *
 * Guard for rule 5 ("a line never goes below 0"): with three lines or more, rounding several shares
 * up (or down) can leave the last line a remainder below 0 or above its own amount (weights 3, 3,
 * 3, 1 cents sharing 5: 1.5 -> 2 three times, and the last would get -1). Only then is the letter
 * bent, as little as possible: the last line keeps what fits in [0, its weight] and the rest spills
 * onto the line before it, and so on backwards. Whenever the plain rule is consistent it is the
 * result, unchanged. The shares always sum to the (capped) amount.
 */
export function shareInProportion(amount: bigint, weights: readonly bigint[]): bigint[] {
  const total = sumCents(weights);
  if (total <= 0n) return weights.map(() => 0n);
  const shared = amount < 0n ? 0n : smallerCents(amount, total);
  const shares = weights.map((weight) => divideRounded(shared * weight, total));
  shares[shares.length - 1] = shared - sumCents(shares.slice(0, -1));
  let spill = 0n;
  for (let index = shares.length - 1; index >= 0; index -= 1) {
    const wanted = (shares[index] ?? 0n) + spill;
    const room = weights[index] ?? 0n;
    const kept = wanted < 0n ? 0n : smallerCents(wanted, room);
    spill = wanted - kept;
    shares[index] = kept;
  }
  return shares;
}
