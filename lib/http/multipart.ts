import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { HttpError, unprocessable } from '#lib/errors.ts';
import type { MultipartFileBody } from '#lib/schemas/common.ts';

/**
 * A multipart/form-data reader (RFC 7578) for bodies already in memory: API Gateway hands the
 * whole body to the function (base64), so there is no stream to parse incrementally, and a
 * Buffer search is all it takes. Only what a form upload uses: a boundary, parts with a
 * Content-Disposition `form-data` header (name, filename), an optional Content-Type. Anything
 * else that does not follow the grammar is a MultipartError (answered 400 by multipartFileBody).
 */
export interface MultipartPart {
  name: string;
  /** Present for file parts (possibly empty). */
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export class MultipartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MultipartError';
  }
}

/** A form has a handful of parts; a body of thousands of tiny parts is an attack, not a form. */
export const MAX_PARTS = 20;
const MAX_HEADER_BYTES = 8 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** `form-data; name="file"; filename="a.png"` -> its parameters, names lower-cased, values unquoted. */
export function headerParameters(value: string): { type: string; params: Record<string, string> } {
  const [type = '', ...rest] = splitOutsideQuotes(value);
  const params: Record<string, string> = {};
  for (const piece of rest) {
    const match = /^\s*([^=\s]+)\s*=\s*(.*?)\s*$/s.exec(piece);
    if (!match) continue;
    const name = match[1]!.toLowerCase();
    let raw = match[2]!;
    if (raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2) raw = raw.slice(1, -1).replace(/\\(.)/g, '$1');
    params[name] = raw;
  }
  return { type: type.trim().toLowerCase(), params };
}

function splitOutsideQuotes(value: string): string[] {
  const pieces: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    if (quoted && char === '\\' && i + 1 < value.length) {
      current += char + value[++i];
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === ';' && !quoted) {
      pieces.push(current);
      current = '';
      continue;
    }
    current += char;
  }
  pieces.push(current);
  return pieces;
}

/** The boundary of a `multipart/form-data` Content-Type; undefined for any other media type. */
export function formDataBoundary(contentType: string | undefined): { boundary: string | undefined } | undefined {
  if (!contentType) return undefined;
  const { type, params } = headerParameters(contentType);
  if (type !== 'multipart/form-data') return undefined;
  const boundary = params.boundary;
  // RFC 2046: 1 to 70 characters, not ending in a space.
  const valid = boundary !== undefined && boundary.length >= 1 && boundary.length <= 70 && !boundary.endsWith(' ');
  return { boundary: valid ? boundary : undefined };
}

/** RFC 5987 `filename*=UTF-8''na%C3%AFve.png` wins over the plain `filename` when both are sent. */
function extendedValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const match = /^([\w!#$%&+^`{}~-]*)'[^']*'(.*)$/.exec(value);
  if (!match || match[1]!.toLowerCase() !== 'utf-8') return undefined;
  try {
    return decodeURIComponent(match[2]!);
  } catch {
    return undefined;
  }
}

function parseHeaders(block: Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.toString('utf8').split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError('A part header is not a "Name: value" line');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function toPart(headers: Record<string, string>, data: Buffer): MultipartPart {
  const disposition = headers['content-disposition'];
  if (!disposition) throw new MultipartError('A part has no Content-Disposition header');
  const { type, params } = headerParameters(disposition);
  if (type !== 'form-data' || params.name === undefined) throw new MultipartError('A part is not a form-data part with a name');
  const filename = extendedValue(params['filename*']) ?? params.filename;
  return {
    name: params.name,
    ...(filename !== undefined ? { filename } : {}),
    ...(headers['content-type'] ? { contentType: headers['content-type'] } : {}),
    data,
  };
}

/** Whitespace a sender may put between a delimiter and its line break (RFC 2046 transport padding). */
function skipPadding(body: Buffer, at: number): number {
  while (at < body.length && (body[at] === 0x20 || body[at] === 0x09)) at++;
  return at;
}

/**
 * The parts of a multipart body, in order. Part data are views into `body` (no copy).
 * Throws MultipartError for a body that does not follow the grammar: no opening delimiter,
 * a part without its closing delimiter, a part without a name, too many parts.
 */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  // Every delimiter after the first is preceded by CRLF, which belongs to it, not to the data.
  const nextDelimiter = Buffer.concat([CRLF, delimiter]);
  // The first delimiter opens the body or follows a preamble line.
  let at = body.subarray(0, delimiter.length).equals(delimiter) ? 0 : body.indexOf(nextDelimiter);
  if (at < 0) throw new MultipartError('The body does not contain the boundary of its Content-Type');
  if (at > 0) at += CRLF.length;
  const parts: MultipartPart[] = [];
  for (;;) {
    at += delimiter.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts; // `--boundary--`: the end (an epilogue is ignored)
    at = skipPadding(body, at);
    if (!body.subarray(at, at + 2).equals(CRLF)) throw new MultipartError('A boundary line is not followed by a line break');
    at += CRLF.length;
    if (parts.length >= MAX_PARTS) throw new MultipartError(`A form may hold at most ${MAX_PARTS} parts`);
    // A part with no headers begins directly with the blank line.
    const headersEnd = body.subarray(at, at + 2).equals(CRLF) ? at : body.indexOf(HEADER_END, at);
    if (headersEnd < 0 || headersEnd - at > MAX_HEADER_BYTES) throw new MultipartError('A part has no end to its headers');
    const headers = parseHeaders(body.subarray(at, headersEnd));
    const dataStart = headersEnd === at ? at + CRLF.length : headersEnd + HEADER_END.length;
    const dataEnd = body.indexOf(nextDelimiter, dataStart);
    if (dataEnd < 0) throw new MultipartError('The body ends before the closing boundary');
    parts.push(toPart(headers, body.subarray(dataStart, dataEnd)));
    at = dataEnd + CRLF.length;
  }
}

/**
 * The body of a `multipart` route: its one `file` part. Another media type: 415. A body that is
 * not valid multipart: 400 (like a body that is not JSON). No `file` part, a `file` that is not
 * a file, two of them, or any other part: 422 naming it (bodies are strict).
 */
export function multipartFileBody(event: APIGatewayProxyEventV2): MultipartFileBody {
  const form = formDataBoundary(event.headers?.['content-type']);
  if (!form) {
    throw new HttpError(415, { message: 'Content-Type must be multipart/form-data with one part named file', code: 'UNSUPPORTED_MEDIA_TYPE' });
  }
  if (!form.boundary) throw new HttpError(400, { message: 'The multipart/form-data Content-Type has no valid boundary', code: 'INVALID_MULTIPART' });
  const body = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  let parts;
  try {
    parts = body.length === 0 ? [] : parseMultipart(body, form.boundary);
  } catch (error) {
    if (error instanceof MultipartError) throw new HttpError(400, { message: `Malformed multipart body: ${error.message}`, code: 'INVALID_MULTIPART' });
    throw error;
  }
  const unknown = parts.find((part) => part.name !== 'file');
  if (unknown) throw unprocessable(`Unknown part ${unknown.name}: send only the part file`, unknown.name);
  if (parts.length === 0) throw unprocessable('file is required: send the image as the multipart part named file', 'file');
  if (parts.length > 1) throw unprocessable('Send exactly one part named file', 'file');
  const [part] = parts;
  if (part!.filename === undefined) throw unprocessable('file must be a file (a part with a filename)', 'file');
  return { file: { filename: part!.filename, bytes: part!.data, ...(part!.contentType ? { contentType: part!.contentType } : {}) } };
}
