import { currentTimeMs } from '#lib/clock.ts';
import { cancelUnpaidOrders } from '#lib/flows/unpaid.ts';

/** The scheduled job of lib/routes/jobs.ts: EventBridge (or the local stack's timer) calls it; its event carries nothing it needs. */
export const handler = async () => {
  const result = await cancelUnpaidOrders(currentTimeMs());
  console.log(JSON.stringify({ level: 'info', job: 'unpaid-orders-cancel', ...result }));
  return result;
};
