import type { ChargeLine, ChargeRequest } from '#lib/payments/adapter.ts';

/** Providers' line items (Stripe, PayPal): whole minor units, no negative lines. */
export interface ProviderLine {
  name: string;
  quantity: number;
  unit_cents: number;
}

const toCents = (amount: number) => Math.round(amount * 100);

/** The order's lines when they add up to the amount (no negative lines at Stripe or PayPal), else one line of the total. */
export function chargeLines(request: ChargeRequest): ProviderLine[] {
  const total = toCents(request.payment.amount);
  const lines = (request.lines ?? []).map((line: ChargeLine) => ({
    name: line.name.slice(0, 127) || request.order.description,
    quantity: line.quantity,
    unit_cents: toCents(line.unit_price),
  }));
  const sum = lines.reduce((acc, line) => acc + line.quantity * line.unit_cents, 0);
  const usable = lines.length > 0 && sum === total && lines.every((line) => Number.isInteger(line.quantity) && line.quantity > 0 && line.unit_cents >= 0);
  return usable ? lines : [{ name: request.order.description, quantity: 1, unit_cents: total }];
}
