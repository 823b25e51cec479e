/**
 * An item's size as DynamoDB counts it against its 400 KB (and a transaction's 4 MB): each
 * attribute is its name's UTF-8 bytes plus its value; a string its UTF-8 bytes; a number at most
 * 21 bytes (counted as 21 here, the worst case); a boolean or null 1 byte; binary its bytes; a
 * list or map 3 bytes plus 1 per element, plus each element (a map's keys counted like names).
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
 */
export function valueBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return 21;
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, element) => sum + 1 + valueBytes(element), 0);
  if (value instanceof Set) return [...value].reduce((sum: number, element) => sum + valueBytes(element), 0);
  if (typeof value === 'object') {
    return 3 + Object.entries(value).reduce((sum, [key, element]) => sum + 1 + Buffer.byteLength(key, 'utf8') + valueBytes(element), 0);
  }
  throw new Error(`no DynamoDB size for ${typeof value}`);
}

export function itemBytes(item: Record<string, unknown>): number {
  return Object.entries(item).reduce((sum, [name, value]) => (value === undefined ? sum : sum + Buffer.byteLength(name, 'utf8') + valueBytes(value)), 0);
}

export const ITEM_MAX_BYTES = 400 * 1024;
export const TRANSACTION_MAX_BYTES = 4 * 1024 * 1024;
