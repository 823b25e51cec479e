import { findCustomer } from '#lib/db/customer.ts';
import { issueHandoff } from '#lib/db/handoff.ts';
import { customerUnauthenticated } from '#lib/errors.ts';

/**
 * A handoff for the session's customer: 1 GetItem (the identity as it is now) + 1 TransactWrite.
 * A session whose customer no longer exists is no login.
 */
export async function issueHandoffForCustomer(storeId: number, customerId: number) {
  const customer = await findCustomer(storeId, customerId);
  if (!customer) throw customerUnauthenticated();
  return issueHandoff(customer);
}
