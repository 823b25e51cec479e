import { fieldsOf, getOne, newItemWrite, patchOne, readItem, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, nowIso, storePk } from '#lib/db/keys.ts';
import { nextId } from '#lib/db/sequence.ts';
import { putNewItem, retrying, writeGuarded, WrittenConcurrently } from '#lib/db/transact.ts';
import { CUSTOMER_NAME_MAX, type Customer, type CustomerPatch } from '#lib/schemas/buyer.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Customers (buyers) of a store. The lower-cased e-mail is the identity; the id is per store.
 *
 * | access pattern                 | key                                               | calls |
 * |--------------------------------|---------------------------------------------------|-------|
 * | customer by id (me, handoff)   | `STORE#<s> / CUSTOMER#<id>`                       | 1 Get |
 * | customer by e-mail (verify)    | `STORE#<s> / CUSTOMER_EMAIL#<email>` -> id, then by id | 2 Get |
 * | first verify of an e-mail      | by e-mail (1 Get, miss) + sequence ADD + TransactWrite (customer + e-mail sentinel) | 3 |
 * | update me                      | conditional UpdateItem on the id key              | 1     |
 *
 * The e-mail item is the uniqueness sentinel: two first logins of one address at once create
 * one customer, and the loser reads the winner's.
 */
const CUSTOMER = ENTITY.CUSTOMER;

export const customerKey = (storeId: number, customerId: number) => ({ pk: storePk(storeId), sk: entitySk(CUSTOMER, customerId) });
const customerEmailKey = (storeId: number, email: string) => ({ pk: storePk(storeId), sk: `${ENTITY.CUSTOMER_EMAIL}#${email.toLowerCase()}` });
const customerItem = (customer: Customer) => ({ ...customerKey(customer.store_id, customer.id), entity: CUSTOMER, ...customer });

export function customerFromItem(item: StoredItem): Customer {
  const field = fieldsOf(item, CUSTOMER);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    email: field.string('email'),
    name: field.string('name'),
    avatar: field.stringOrNull('avatar'),
    social_id: field.stringOrNull('social_id'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

export const getCustomer = (storeId: number, customerId: number) => getOne(customerKey(storeId, customerId), 'Customer', customerFromItem);

/**
 * Undefined when absent, for callers that answer something other than 404. Consistent: a
 * handoff issued right after a profile change must carry the new profile.
 */
export async function findCustomer(storeId: number, customerId: number): Promise<Customer | undefined> {
  const item = await readItem(customerKey(storeId, customerId), true);
  return item ? customerFromItem(item) : undefined;
}

export const updateCustomer = (storeId: number, customerId: number, patch: CustomerPatch) =>
  patchOne(customerKey(storeId, customerId), 'Customer', patch, ['name', 'avatar', 'social_id'], customerFromItem);

// Consistent reads: a login right after a concurrent first login must see the customer it created.
async function customerIdByEmail(storeId: number, email: string): Promise<number | undefined> {
  const sentinel = await readItem(customerEmailKey(storeId, email), true);
  return sentinel ? fieldsOf(sentinel, ENTITY.CUSTOMER_EMAIL).number('customer_id') : undefined;
}

async function customerById(storeId: number, customerId: number): Promise<Customer> {
  const item = await readItem(customerKey(storeId, customerId), true);
  if (!item) throw new Error(`customer ${customerId} of store ${storeId} has an e-mail sentinel but no item`);
  return customerFromItem(item);
}

/** The customer of this e-mail, created on first use with the e-mail's local part as name. */
export async function findOrCreateCustomer(storeId: number, rawEmail: string): Promise<Customer> {
  const email = rawEmail.toLowerCase();
  const existingId = await customerIdByEmail(storeId, email);
  if (existingId !== undefined) return customerById(storeId, existingId);

  const id = await nextId(storeId, CUSTOMER);
  const now = nowIso();
  const customer: Customer = {
    id,
    store_id: storeId,
    email,
    name: email.slice(0, email.lastIndexOf('@')).slice(0, CUSTOMER_NAME_MAX),
    avatar: null,
    social_id: null,
    created_at: now,
    updated_at: now,
  };
  try {
    await retrying(() =>
      writeGuarded([
        newItemWrite(customerItem(customer)),
        {
          item: putNewItem({ ...customerEmailKey(storeId, email), entity: ENTITY.CUSTOMER_EMAIL, store_id: storeId, customer_id: id }),
          onConditionFailed: () => new WrittenConcurrently(),
        },
      ]),
    );
  } catch (error) {
    if (!(error instanceof WrittenConcurrently)) throw error;
    // A concurrent first login of the same address won; its customer is the one.
    const winnerId = await customerIdByEmail(storeId, email);
    if (winnerId === undefined) throw error;
    return customerById(storeId, winnerId);
  }
  return customer;
}
