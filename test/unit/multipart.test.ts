import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { formDataBoundary, headerParameters, MAX_PARTS, MultipartError, multipartFileBody, parseMultipart } from '#lib/http/multipart.ts';
import { statusOf } from '../support/http-error.ts';

const CRLF = '\r\n';
const body = (...lines: (string | Buffer)[]) => Buffer.concat(lines.map((line) => (typeof line === 'string' ? Buffer.from(line) : line)));

describe('formDataBoundary', () => {
  it.each([
    ['multipart/form-data; boundary=abc', 'abc'],
    ['Multipart/Form-Data;boundary="a b;c"', 'a b;c'],
    ['multipart/form-data; charset=utf-8; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW', '----WebKitFormBoundary7MA4YWxkTrZu0gW'],
    ['multipart/form-data; BOUNDARY=x', 'x'],
  ])('reads the boundary of %s', (header, boundary) => {
    expect(formDataBoundary(header)).toEqual({ boundary });
  });

  it('answers undefined for any other media type, and no boundary for a missing or invalid one', () => {
    for (const header of [undefined, '', 'application/json', 'multipart/mixed; boundary=x', 'image/png']) expect(formDataBoundary(header)).toBeUndefined();
    expect(formDataBoundary('multipart/form-data')).toEqual({ boundary: undefined });
    expect(formDataBoundary('multipart/form-data; boundary=')).toEqual({ boundary: undefined });
    expect(formDataBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toEqual({ boundary: undefined });
  });
});

describe('headerParameters', () => {
  it('unquotes values, keeps semicolons inside quotes, unescapes quoted characters', () => {
    expect(headerParameters('form-data; name="file"; filename="a \\"b\\"; c.png"')).toEqual({
      type: 'form-data',
      params: { name: 'file', filename: 'a "b"; c.png' },
    });
  });
});

describe('parseMultipart', () => {
  it('reads named parts, file names, content types and binary data byte for byte', () => {
    const binary = Buffer.from([0x89, 0x50, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff]);
    const parsed = parseMultipart(
      body(
        `--xyz${CRLF}Content-Disposition: form-data; name="title"${CRLF}${CRLF}hello${CRLF}`,
        `--xyz${CRLF}content-disposition: form-data; name="file"; filename="logo.png"${CRLF}Content-Type: image/png${CRLF}${CRLF}`,
        binary,
        `${CRLF}--xyz--${CRLF}`,
      ),
      'xyz',
    );
    expect(parsed).toHaveLength(2);
    expect(parsed[0]).toEqual({ name: 'title', data: Buffer.from('hello') });
    expect(parsed[1]).toMatchObject({ name: 'file', filename: 'logo.png', contentType: 'image/png' });
    expect(parsed[1]!.data.equals(binary)).toBe(true);
  });

  it('ignores a preamble and an epilogue, and accepts transport padding after a delimiter', () => {
    const parsed = parseMultipart(body(`This is a preamble${CRLF}--b \t${CRLF}Content-Disposition: form-data; name="a"${CRLF}${CRLF}1${CRLF}--b--${CRLF}epilogue`), 'b');
    expect(parsed).toEqual([{ name: 'a', data: Buffer.from('1') }]);
  });

  it('keeps data that looks like the boundary without the leading line break', () => {
    const parsed = parseMultipart(body(`--b${CRLF}Content-Disposition: form-data; name="a"${CRLF}${CRLF}x--b y${CRLF}--b--`), 'b');
    expect(parsed[0]!.data.toString()).toBe('x--b y');
  });

  it('reads empty parts and empty file names', () => {
    const parsed = parseMultipart(body(`--b${CRLF}Content-Disposition: form-data; name="file"; filename=""${CRLF}${CRLF}${CRLF}--b--`), 'b');
    expect(parsed).toEqual([{ name: 'file', filename: '', data: Buffer.alloc(0) }]);
  });

  it('prefers the RFC 5987 filename* to filename', () => {
    const parsed = parseMultipart(
      body(`--b${CRLF}Content-Disposition: form-data; name="file"; filename="logo.png"; filename*=UTF-8''na%C3%AFve.svg${CRLF}${CRLF}x${CRLF}--b--`),
      'b',
    );
    expect(parsed[0]!.filename).toBe('naïve.svg');
  });

  it('answers no parts for a form closed right away', () => {
    expect(parseMultipart(body(`--b--${CRLF}`), 'b')).toEqual([]);
  });

  it.each([
    ['no boundary in the body', `hello world`],
    ['another boundary', `--c${CRLF}Content-Disposition: form-data; name="a"${CRLF}${CRLF}1${CRLF}--c--`],
    ['no closing delimiter', `--b${CRLF}Content-Disposition: form-data; name="a"${CRLF}${CRLF}1`],
    ['headers without an end', `--b${CRLF}Content-Disposition: form-data; name="a"`],
    ['a part without Content-Disposition', `--b${CRLF}Content-Type: text/plain${CRLF}${CRLF}1${CRLF}--b--`],
    ['a part without headers', `--b${CRLF}${CRLF}1${CRLF}--b--`],
    ['a disposition other than form-data', `--b${CRLF}Content-Disposition: attachment; name="a"${CRLF}${CRLF}1${CRLF}--b--`],
    ['a form-data part without a name', `--b${CRLF}Content-Disposition: form-data; filename="a.png"${CRLF}${CRLF}1${CRLF}--b--`],
    ['a header line without a colon', `--b${CRLF}Content-Disposition: form-data; name="a"${CRLF}garbage${CRLF}${CRLF}1${CRLF}--b--`],
    ['a delimiter followed by text', `--bx${CRLF}Content-Disposition: form-data; name="a"${CRLF}${CRLF}1${CRLF}--b--`],
  ])('refuses %s', (_case, text) => {
    expect(() => parseMultipart(Buffer.from(text), 'b')).toThrow(MultipartError);
  });

  it(`refuses more than ${MAX_PARTS} parts`, () => {
    const part = `--b${CRLF}Content-Disposition: form-data; name="a"${CRLF}${CRLF}1${CRLF}`;
    expect(parseMultipart(Buffer.from(`${part.repeat(MAX_PARTS)}--b--`), 'b')).toHaveLength(MAX_PARTS);
    expect(() => parseMultipart(Buffer.from(`${part.repeat(MAX_PARTS + 1)}--b--`), 'b')).toThrow(/at most/);
  });
});

describe('multipartFileBody', () => {
  const event = (contentType: string | undefined, body: Buffer | undefined, isBase64Encoded = true) =>
    ({
      headers: contentType ? { 'content-type': contentType } : {},
      body: body && (isBase64Encoded ? body.toString('base64') : body.toString('utf8')),
      isBase64Encoded,
    }) as APIGatewayProxyEventV2;
  const form = Buffer.from('--b\r\nContent-Disposition: form-data; name="file"; filename="a.svg"\r\n\r\n<svg/>\r\n--b--\r\n');
  const part = (headers: string, data: string) => `--b${CRLF}${headers}${CRLF}${CRLF}${data}${CRLF}`;
  const fileOf = (...parts: string[]) => multipartFileBody(event('multipart/form-data; boundary=b', Buffer.from(`${parts.join('')}--b--${CRLF}`)));

  it('decodes a base64 body (as API Gateway sends multipart) and a plain one', () => {
    expect(multipartFileBody(event('multipart/form-data; boundary=b', form))).toEqual({ file: { filename: 'a.svg', bytes: Buffer.from('<svg/>') } });
    expect(multipartFileBody(event('multipart/form-data; boundary=b', form, false))).toEqual({ file: { filename: 'a.svg', bytes: Buffer.from('<svg/>') } });
  });

  it('keeps the content type the client declared', () => {
    const file = fileOf(part('Content-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png', 'x'));
    expect(file.file.contentType).toBe('image/png');
  });

  it('answers 415 for another media type, 400 for a missing boundary or a malformed body', () => {
    expect(statusOf(() => multipartFileBody(event('application/json', form)))?.status).toBe(415);
    expect(statusOf(() => multipartFileBody(event(undefined, form)))?.status).toBe(415);
    expect(statusOf(() => multipartFileBody(event('multipart/form-data', form)))).toMatchObject({ status: 400, code: 'INVALID_MULTIPART' });
    expect(statusOf(() => multipartFileBody(event('multipart/form-data; boundary=b', Buffer.from('junk'))))).toMatchObject({ status: 400, code: 'INVALID_MULTIPART' });
  });

  it('answers 422 naming the part for no file, two files, a file without a filename, or another part', () => {
    const file = part('Content-Disposition: form-data; name="file"; filename="a.svg"', '<svg/>');
    expect(statusOf(() => multipartFileBody(event('multipart/form-data; boundary=b', undefined)))).toEqual({ status: 422, code: 'VALIDATION_FAILED', field: 'file' });
    expect(statusOf(() => fileOf(file, file))).toEqual({ status: 422, code: 'VALIDATION_FAILED', field: 'file' });
    expect(statusOf(() => fileOf(part('Content-Disposition: form-data; name="file"', 'text')))).toEqual({ status: 422, code: 'VALIDATION_FAILED', field: 'file' });
    expect(statusOf(() => fileOf(file, part('Content-Disposition: form-data; name="note"', 'hi')))).toEqual({ status: 422, code: 'VALIDATION_FAILED', field: 'note' });
  });
});
