import { fieldsOf, getMany, type StoredItem } from '#lib/db/entity.ts';
import { padId, storePk } from '#lib/db/keys.ts';
import { queryItems } from '#lib/db/query.ts';
import { put, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/*
 * The due list of unpaid checkout orders: a checkout order still PENDING 30 minutes after it
 * was placed is canceled by a scheduled job (lib/flows/unpaid.ts). Its cost follows the work,
 * not the number of stores: each checkout writes one due item, in its own transaction, under the
 * minute it falls due; the job reads only the minutes that have come due since its last run.
 *
 * | access pattern                 | key                                                                 | calls   |
 * |--------------------------------|---------------------------------------------------------------------|---------|
 * | file an order as due           | Put `UNPAID#<due minute, ISO>` / `STORE#<s>#ORDER#<id>` in the       | 0 extra |
 * |                                | checkout's TransactWrite (TTL a week later)                          |         |
 * | orders due in one minute       | Query `UNPAID#<minute>`                                              | 1 per minute |
 * | job state (last minute done)   | `#JOB#<name>` / `#STATE`: GetItem, conditional Put moving it forward | 2 per run |
 *
 * The due items are never deleted by the job: once the state has passed a minute it is not read
 * again, and TTL removes the item. An order approved or canceled before its minute is simply
 * found not PENDING.
 */
/** A due item outlives its minute by a week: long enough for a job that was down to catch up. */
const DUE_ITEM_TTL_SECONDS = 7 * 24 * 3600;

const duePk = (minute: string) => `${ENTITY.UNPAID}#${minute}`;

/** The due item of an order, for the checkout's transaction; `minute` is the bucket of `dueAt` (lib/domain/unpaid.ts). */
export function fileUnpaid(storeId: number, orderId: number, dueAt: number, minute: string): GuardedWrite {
  return {
    item: put({
      Item: {
        pk: duePk(minute),
        sk: `${storePk(storeId)}#${ENTITY.ORDER}#${padId(orderId)}`,
        entity: ENTITY.UNPAID,
        store_id: storeId,
        order_id: orderId,
        due_at: new Date(dueAt).toISOString(),
        expires_epoch: Math.ceil(dueAt / 1000) + DUE_ITEM_TTL_SECONDS,
      },
    }),
  };
}

export interface DueOrder {
  store_id: number;
  order_id: number;
}

export function dueOrderFromItem(item: StoredItem): DueOrder {
  const field = fieldsOf(item, ENTITY.UNPAID);
  return { store_id: field.number('store_id'), order_id: field.number('order_id') };
}

/** The orders filed under one minute. */
export async function dueIn(minute: string): Promise<DueOrder[]> {
  return (await queryItems({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': duePk(minute) } })).map(dueOrderFromItem);
}

const jobStateKey = (job: string) => ({ pk: `#JOB#${job}`, sk: '#STATE' });

/** The last minute the job has handled, or undefined on its first run. */
export async function jobDoneThrough(job: string): Promise<string | undefined> {
  const [item] = await getMany([jobStateKey(job)]);
  return item ? fieldsOf(item, ENTITY.JOB_STATE).optionalString('done_through') : undefined;
}

/** Moves the job's state forward to `minute`; a concurrent run that got further wins (never moved back). */
export async function markJobDoneThrough(job: string, minute: string): Promise<void> {
  await writeIf(
    put({
      Item: { ...jobStateKey(job), entity: ENTITY.JOB_STATE, done_through: minute },
      ConditionExpression: 'attribute_not_exists(done_through) OR done_through < :minute',
      ExpressionAttributeValues: { ':minute': minute },
    }),
  );
}
