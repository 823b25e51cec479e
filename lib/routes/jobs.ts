import type { ResourceUse, RouteSpec } from '#lib/http/route.ts';

/**
 * Scheduled jobs, beside the route table and read the same way: each is `functions/<name>.ts`
 * (its `handler` takes the scheduled event), run on AWS by an EventBridge schedule and on the
 * local stack by a timer (infra/local/start.ts), with the table access it is granted.
 */
export interface JobSpec {
  /** An EventBridge schedule expression; the local stack reads `rate(N minute|minutes|hour|hours)`. */
  schedule: string;
  access: RouteSpec['access'];
  /** Besides the table: `provider-secrets-open` (kms:Decrypt) for a job that calls payment providers with the stores' credentials. */
  uses?: readonly Extract<ResourceUse, 'provider-secrets-open'>[];
  summary: string;
}

export const jobs = {
  'unpaid-orders-cancel': {
    schedule: 'rate(1 minute)',
    access: 'write',
    summary: 'Cancel checkout orders still PENDING 30 minutes after they were placed, giving back stock, limits and coupon uses',
  },
  'payments-reconcile': {
    schedule: 'rate(5 minutes)',
    access: 'write',
    uses: ['provider-secrets-open'],
    summary:
      'Ask the provider about every live payment and settle it (a lost notification still approves its order); expire payments past their expiry and cancel checkout orders left with no live payment',
  },
} as const satisfies Record<string, JobSpec>;

export type JobName = keyof typeof jobs;

export const jobEntries = () => Object.entries(jobs) as [JobName, JobSpec][];
