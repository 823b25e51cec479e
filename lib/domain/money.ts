import type { OrderPackageLine } from '#lib/schemas/order.ts';

/**
 * Amounts as the buyer sees them: rounded to cents at each step shown (subtotal, discount,
 * total). Shared by the order and coupon rules, which would otherwise import each other.
 */
export const roundCents = (value: number) => Math.round((value + Number.EPSILON) * 100) / 100;

export const subtotalOf = (lines: readonly OrderPackageLine[]) => roundCents(lines.reduce((sum, line) => sum + line.price * line.quantity, 0));
