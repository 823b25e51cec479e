import { randomBytes } from 'node:crypto';
import { currentTimeMs } from '#lib/clock.ts';
import { customerKey, findCustomer } from '#lib/db/customer.ts';
import { fieldsOf, getMany, newItemWrite, readItem, type StoredItem } from '#lib/db/entity.ts';
import { createOnce } from '#lib/db/idempotency.ts';
import { storePk } from '#lib/db/keys.ts';
import { assertBuyerOwns, internalIdSk } from '#lib/db/order.ts';
import { queryBetween } from '#lib/db/query.ts';
import { storeKey } from '#lib/db/store.ts';
import { update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import { USER_TYPES, type ChatMessage, type Reader } from '#lib/schemas/chat.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Order chat. The API names an order's chat by its internal_id, so the chat lives in the item
 * collection of the order's internal_id sentinel (written by lib/db/order.ts):
 *
 *   `STORE#<s> / ORDER_INTERNAL#<internal_id>`                    the sentinel: {order_id, client_email} (lib/db/order.ts)
 *   `STORE#<s> / ORDER_INTERNAL#<internal_id>#CHAT#MSG#<id>`      a message; ids sort by time
 *   `STORE#<s> / ORDER_INTERNAL#<internal_id>#CHAT#STATE`         read marks: `seller_read_until`, `buyer_read_until`
 *
 * One consistent Query `sk BETWEEN ORDER_INTERNAL#<iid> AND ORDER_INTERNAL#<iid>#CHAT#~` reads
 * the sentinel (the order exists: 404 otherwise), every message and the read marks. internal_ids
 * are [A-Za-z0-9_-], all above `#`, so no other order's sentinel falls in that range.
 *
 * Read marks are two watermarks, not a write per message: a message is read by the other side
 * when its id is at or below that side's mark. Reading a page moves the reader's mark up to the
 * newest message of the other side on that page, with one UpdateItem conditioned on the mark
 * being lower (so concurrent readers never move it back); `read_by` is computed from the marks.
 *
 * | request       | calls after the credential                                                                  | calls |
 * |---------------|---------------------------------------------------------------------------------------------|-------|
 * | operator list | Query (1 per MB) + UpdateItem of the mark when the page shows unread buyer messages         | 1-2   |
 * | operator post | BatchGet (sentinel, store for sender_name) + Put (with an Idempotency-Key, a TransactWrite: the Put and the key's record of it) | 2 |
 * | post again after a lost answer (same key) | GetItem of the message recorded on the key (lib/db/idempotency.ts `createOnce`) | 1 |
 * | buyer list    | Query + GetItem customer (e-mails must match) + UpdateItem of the mark when needed          | 2-3   |
 * | buyer post    | BatchGet (sentinel, customer) + Put (with a key: TransactWrite, as above)                   | 2     |
 *
 * A buyer reaches only the orders whose `client_email` is the customer's e-mail (ignoring case);
 * any other order is a 404, exactly like a missing one. The sentinel carries the order's
 * `client_email` (it never changes once the order is placed), so no order item is read.
 */
const CHAT_MESSAGE = ENTITY.CHAT_MESSAGE;
const CHAT_STATE = ENTITY.CHAT_STATE;

/** The order module's sentinel of an internal_id (lib/db/order.ts writes it with the order). */
const chatPrefix = (internalId: string) => `${internalIdSk(internalId)}#CHAT#`;
const messageKey = (storeId: number, internalId: string, messageId: string) => ({ pk: storePk(storeId), sk: `${chatPrefix(internalId)}MSG#${messageId}` });
const stateKey = (storeId: number, internalId: string) => ({ pk: storePk(storeId), sk: `${chatPrefix(internalId)}STATE` });

type UserType = ChatMessage['user_type'];
const READER_OF: Record<UserType, Reader> = { buyer: 'buyer', store: 'seller' };
const OTHER: Record<Reader, Reader> = { buyer: 'seller', seller: 'buyer' };
const markOf = (reader: Reader) => `${reader}_read_until` as const;

interface MessageItem {
  id: string;
  store_id: number;
  order_id: number;
  message: string;
  attachments: unknown[];
  user_type: UserType;
  sender_name: string | null;
  source: string | null;
  timestamp: string;
}

type Marks = Partial<Record<`${Reader}_read_until`, string>>;

const messageItem = (internalId: string, message: MessageItem) => ({ ...messageKey(message.store_id, internalId, message.id), entity: CHAT_MESSAGE, ...message });

function messageFromItem(item: StoredItem): MessageItem {
  const field = fieldsOf(item, CHAT_MESSAGE);
  return {
    id: field.string('id'),
    store_id: field.number('store_id'),
    order_id: field.number('order_id'),
    message: field.string('message'),
    attachments: field.list('attachments'),
    user_type: field.oneOf('user_type', USER_TYPES),
    sender_name: field.stringOrNull('sender_name'),
    source: field.stringOrNull('source'),
    timestamp: field.string('timestamp'),
  };
}

function marksFromItem(item: StoredItem): Marks {
  const field = fieldsOf(item, CHAT_STATE);
  return { seller_read_until: field.optionalString('seller_read_until'), buyer_read_until: field.optionalString('buyer_read_until') };
}

/** The order module's internal_id sentinel (lib/db/order.ts), read for the two attributes a chat needs. */
function sentinelFromItem(item: StoredItem): { orderId: number; clientEmail: unknown } {
  return { orderId: fieldsOf(item, ENTITY.ORDER_INTERNAL).number('order_id'), clientEmail: item.client_email };
}

/** Ids sort as the messages were written: epoch milliseconds (13 digits), then randomness against ties. */
const newMessageId = (now: number) => `${String(now).padStart(13, '0')}-${randomBytes(5).toString('hex')}`;

function messageResponse(item: MessageItem, marks: Marks): ChatMessage {
  const author = READER_OF[item.user_type];
  const other = OTHER[author];
  const readByOther = (marks[markOf(other)] ?? '') >= item.id;
  return {
    id: item.id,
    message: item.message,
    attachments: item.attachments,
    user_type: item.user_type,
    sender_name: item.sender_name,
    source: item.source,
    read_by: readByOther ? [author, other] : [author],
    timestamp: item.timestamp,
  };
}

/** A message as a webhook's `chat.message_created` carries it: as just written, read by its author only, with its order's id. */
export function newMessageOf(item: StoredItem): ChatMessage & { order_id: number } {
  const message = messageFromItem(item);
  return { ...messageResponse(message, {}), order_id: message.order_id };
}

interface Chat {
  orderId: number;
  clientEmail: unknown;
  messages: MessageItem[];
  marks: Marks;
}

/** The sentinel, the messages (oldest first) and the marks of one order's chat; 404 when there is no such order. */
async function readChat(storeId: number, internalId: string): Promise<Chat> {
  const items = await queryBetween(storePk(storeId), internalIdSk(internalId), `${chatPrefix(internalId)}~`);
  const sentinel = items[0];
  if (sentinel?.sk !== internalIdSk(internalId)) throw notFound('Order');
  const state = items.find((item) => item.entity === CHAT_STATE);
  return {
    ...sentinelFromItem(sentinel),
    messages: items.filter((item) => item.entity === CHAT_MESSAGE).map(messageFromItem),
    marks: state ? marksFromItem(state) : {},
  };
}

/** Moves the reader's mark up to `messageId`; a concurrent reader that already went further wins. */
async function markRead(storeId: number, internalId: string, orderId: number, reader: Reader, messageId: string): Promise<void> {
  await writeIf(
    update({
      Key: stateKey(storeId, internalId),
      UpdateExpression: 'SET #mark = :id, entity = :entity, store_id = :store, order_id = :order',
      ConditionExpression: 'attribute_not_exists(#mark) OR #mark < :id',
      ExpressionAttributeNames: { '#mark': markOf(reader) },
      ExpressionAttributeValues: { ':id': messageId, ':entity': CHAT_STATE, ':store': storeId, ':order': orderId },
    }),
  );
}

export interface PageRequest {
  page: number;
  limit: number;
}

/** A page of messages and how many the chat holds; the HTTP layer adds the page meta. */
export interface ChatPage {
  total: number;
  data: ChatMessage[];
}

/**
 * One page of an order's chat as `reader` sees it, marking the other side's messages on that
 * page (and before it) as read by the reader. Pages count from the newest end: page 1 holds the
 * `limit` newest messages; within a page, oldest to newest.
 */
async function chatPage(storeId: number, internalId: string, reader: Reader, chat: Chat, request: PageRequest): Promise<ChatPage> {
  const total = chat.messages.length;
  const end = total - (request.page - 1) * request.limit;
  const shown = end > 0 ? chat.messages.slice(Math.max(0, end - request.limit), end) : [];
  const newestUnread = shown.filter((message) => READER_OF[message.user_type] !== reader).at(-1)?.id;
  const marks = { ...chat.marks };
  if (newestUnread !== undefined && (marks[markOf(reader)] ?? '') < newestUnread) {
    await markRead(storeId, internalId, chat.orderId, reader, newestUnread);
    marks[markOf(reader)] = newestUnread;
  }
  return { total, data: shown.map((message) => messageResponse(message, marks)) };
}

export async function listStoreChat(storeId: number, internalId: string, request: PageRequest): Promise<ChatPage> {
  return chatPage(storeId, internalId, 'seller', await readChat(storeId, internalId), request);
}

export async function listBuyerChat(storeId: number, customerId: number, internalId: string, request: PageRequest): Promise<ChatPage> {
  const [chat, customer] = await Promise.all([readChat(storeId, internalId), findCustomer(storeId, customerId)]);
  assertBuyerOwns(customer, chat.clientEmail);
  return chatPage(storeId, internalId, 'buyer', chat, request);
}

async function putMessage(
  storeId: number,
  internalId: string,
  orderId: number,
  fields: Pick<MessageItem, 'message' | 'user_type' | 'sender_name' | 'source'>,
  recordOnKey: (messageId: string) => GuardedWrite[],
): Promise<ChatMessage> {
  const now = currentTimeMs();
  const item: MessageItem = { id: newMessageId(now), store_id: storeId, order_id: orderId, attachments: [], timestamp: new Date(now).toISOString(), ...fields };
  await writeGuarded([newItemWrite(messageItem(internalId, item)), ...recordOnKey(item.id)]);
  return messageResponse(item, {});
}

/** The message a post of this request wrote, as the post answered it (read marks aside). */
async function postedMessage(storeId: number, internalId: string, messageId: string): Promise<ChatMessage> {
  const item = await readItem(messageKey(storeId, internalId, messageId), true);
  if (!item) throw notFound('Message');
  return messageResponse(messageFromItem(item), {});
}

/** A store message (`source` `api`): its sender_name is the store's name. */
export async function postStoreMessage(storeId: number, internalId: string, message: string): Promise<ChatMessage> {
  return createOnce(
    (messageId: string) => postedMessage(storeId, internalId, messageId),
    async (recordOnKey) => {
      const sentinelKey = { pk: storePk(storeId), sk: internalIdSk(internalId) };
      const [sentinel, store] = await getMany([sentinelKey, storeKey(storeId)]);
      if (!sentinel) throw notFound('Order');
      const senderName = typeof store?.name === 'string' ? store.name : null;
      const fields = { message, user_type: 'store', sender_name: senderName, source: 'api' } as const;
      return putMessage(storeId, internalId, sentinelFromItem(sentinel).orderId, fields, recordOnKey);
    },
  );
}

/** A buyer message (`source` `web`) from the order's own customer: its sender_name is the customer's name. */
export async function postBuyerMessage(storeId: number, customerId: number, internalId: string, message: string): Promise<ChatMessage> {
  return createOnce(
    (messageId: string) => postedMessage(storeId, internalId, messageId),
    async (recordOnKey) => {
      const [sentinel, customerItem] = await getMany([{ pk: storePk(storeId), sk: internalIdSk(internalId) }, customerKey(storeId, customerId)]);
      if (!sentinel) throw notFound('Order');
      const customer = assertBuyerOwns(customerItem, sentinelFromItem(sentinel).clientEmail);
      const senderName = typeof customer.name === 'string' ? customer.name : null;
      const fields = { message, user_type: 'buyer', sender_name: senderName, source: 'web' } as const;
      return putMessage(storeId, internalId, sentinelFromItem(sentinel).orderId, fields, recordOnKey);
    },
  );
}
