import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { HttpError } from '#lib/errors.ts';

/**
 * The request body exactly as the caller sent it, for a route whose body is signed (a payment
 * provider's notification): such a route declares no `body` schema, so no JSON parser touches it,
 * and this reads it. API Gateway (and the local server, which mirrors it) hands a body that is not
 * text base64-encoded (`isBase64Encoded`); decoded here, byte for byte. Beyond `maxBytes`: 413.
 */
export function rawBody(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>, maxBytes: number): string {
  const bytes = event.body === undefined ? Buffer.alloc(0) : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  if (bytes.length > maxBytes) throw new HttpError(413, { message: `Request body larger than ${maxBytes / 1024} KB`, code: 'PAYLOAD_TOO_LARGE' });
  return bytes.toString('utf8');
}

/** Header names in lower case (HTTP APIs already send them so; a local or test event may not). */
export const lowerCaseHeaders = (headers: APIGatewayProxyEventV2['headers'] | undefined): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
