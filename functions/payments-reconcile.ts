import { config } from '#lib/config.ts';
import { reconcilePayments } from '#lib/flows/payment-reconcile.ts';

/** The scheduled job of lib/routes/jobs.ts: every live payment asked at its provider and settled; expired ones and abandoned checkouts ended. */
export const handler = async () => {
  const result = await reconcilePayments(config.apiBaseUrl ?? '');
  console.log(JSON.stringify({ level: 'info', job: 'payments-reconcile', ...result }));
  return result;
};
