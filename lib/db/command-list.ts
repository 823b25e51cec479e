import { COMMAND, commandFromItem, commandResponse } from '#lib/db/command.ts';
import type { ServerKeys } from '#lib/crypto.ts';
import { cursorCodec, isId } from '#lib/db/cursor.ts';
import { entitySk, storePk } from '#lib/db/keys.ts';
import { queryPages, type StartKey } from '#lib/db/query.ts';
import type { CommandCursorPage, CommandFilters, CommandRecord } from '#lib/schemas/command.ts';

/**
 * The operator's command list (`GET /v1/app/command`, cursor mode). Calls exclude the credential.
 *
 * | access pattern                  | key                                                                       | calls   |
 * |---------------------------------|---------------------------------------------------------------------------|---------|
 * | newest first                    | Query `STORE#<s>`, sk BETWEEN `COMMAND#` and `COMMAND#<cursor id - 1>`, descending | 1 |
 * | `status`, `server` filters      | the same + FilterExpression: Queries of 200 until the page fills or 1000 were examined | 1-5 |
 *
 * The cursor (lib/db/cursor.ts) holds the last id answered; ids grow with approval time, so id
 * order is newest first. The `order` filter is served from the order's own ids (lib/flows/command.ts).
 */

const codec = cursorCodec('command', ({ i }) => (isId(i) ? { i } : undefined));
const listFilters = (filters: CommandFilters) => [filters.status ?? null, filters.server ?? null, filters.order ?? null];
export const encodeCommandCursor = (storeId: number, filters: CommandFilters, id: number, keys: ServerKeys) => codec.encode(storeId, listFilters(filters), { i: id }, keys);
/** The id a cursor resumes below (exclusive). */
export const decodeCommandCursor = (storeId: number, filters: CommandFilters, cursor: string, keys: ServerKeys) => codec.decode(storeId, listFilters(filters), cursor, keys).i;

/** Commands examined per Query when a filter drops some after the read, and at most per page. */
const FILTERED_BATCH = 200;
const EXAMINED_MAX = 1000;

/**
 * One page of the store's commands, newest (highest id) first, optionally filtered by status and
 * server after the read: a page examines at most 1000 commands, so it may be short, even empty,
 * and still carry a cursor. (The `order` filter is served from the order's own ids: lib/flows/command.ts.)
 */
export async function listCommandsPage(storeId: number, filters: CommandFilters, cursor: string, pageSize: number, keys: ServerKeys): Promise<CommandCursorPage> {
  const below = cursor === '' ? undefined : decodeCommandCursor(storeId, filters, cursor, keys);
  const conditions: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':pk': storePk(storeId), ':from': `${COMMAND}#`, ':to': below === undefined ? `${COMMAND}$` : entitySk(COMMAND, below - 1) };
  if (filters.status) {
    conditions.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = filters.status;
  }
  if (filters.server !== undefined) {
    conditions.push('server_id = :server');
    values[':server'] = filters.server;
  }
  const filtered = conditions.length > 0;
  const wanted = pageSize + 1;
  const records: CommandRecord[] = [];
  let examined = 0;
  let startKey: StartKey | undefined;
  const pages = queryPages(
    {
      // `COMMAND$` sorts after every `COMMAND#<id>` (and before `COMMAND_CHAIN#`): the first page starts at the newest.
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      FilterExpression: filtered ? conditions.join(' AND ') : undefined,
      ExpressionAttributeNames: filtered && filters.status ? names : undefined,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
    },
    { limit: () => (filtered ? FILTERED_BATCH : wanted - records.length) },
  );
  for await (const page of pages) {
    examined += page.ScannedCount ?? 0;
    records.push(...(page.Items ?? []).map(commandFromItem));
    startKey = page.LastEvaluatedKey;
    if (records.length >= wanted || examined >= EXAMINED_MAX) break;
  }
  if (records.length > pageSize) {
    const data = records.slice(0, pageSize);
    return { data: data.map(commandResponse), next_cursor: encodeCommandCursor(storeId, filters, data[data.length - 1]!.id, keys) };
  }
  const lastExamined = startKey ? Number(String(startKey.sk).slice(COMMAND.length + 1)) : undefined;
  return { data: records.map(commandResponse), next_cursor: lastExamined ? encodeCommandCursor(storeId, filters, lastExamined, keys) : null };
}
