import { importBackgroundHandler, routeAccess } from '#infra/local/route-access.ts';
import { jobEntries } from '#lib/routes/jobs.ts';

/**
 * The scheduled jobs of lib/routes/jobs.ts on the local stack: the same handler EventBridge
 * invokes on AWS, on a timer, held to the job's table access as IAM would hold its Lambda.
 */
const UNIT_MS: Record<string, number> = { minute: 60_000, minutes: 60_000, hour: 3_600_000, hours: 3_600_000 };

export function rateMs(schedule: string): number {
  const match = /^rate\((\d+) (minute|minutes|hour|hours)\)$/.exec(schedule);
  if (!match) throw new Error(`The local stack runs rate(N minute|minutes|hour|hours) schedules only, not ${schedule}`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** Starts every job's timer; answers the function that stops them. */
export function startJobTimers(log: boolean): () => void {
  const timers = jobEntries().map(([name, spec]) => {
    const run = async () => {
      try {
        const handler = await importBackgroundHandler<() => Promise<unknown>>(name);
        await routeAccess.run({ access: spec.access }, handler);
      } catch (error) {
        // A failed run is retried by the next tick, as EventBridge's next invocation would.
        if (log) console.error(JSON.stringify({ level: 'error', job: name, error: (error as Error).message }));
      }
    };
    return setInterval(run, rateMs(spec.schedule));
  });
  return () => timers.forEach(clearInterval);
}
