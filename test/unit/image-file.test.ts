import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';

process.env.IMAGES_BASE_URL = 'https://images.example.com';
const { checkImageFile, filePartOf, imageKeyOfUrl, packageImageKeyType, sniffImageType, SNIFF_BYTES } = await import('#lib/http/image-file.ts');
const { IMAGE_MAX_BYTES } = await import('#lib/schemas/image.ts');
const { HttpError } = await import('#lib/errors.ts');

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xdb, 1, 2]);

function statusOf(run: () => unknown): { status: number; code?: string; field?: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, code: error.details[0]?.code, field: error.details[0]?.field };
  }
}

describe('sniffImageType', () => {
  it.each([
    ['PNG', PNG, 'image/png'],
    ['JPEG', JPEG, 'image/jpeg'],
    ['GIF87a', Buffer.from('GIF87a...'), 'image/gif'],
    ['GIF89a', Buffer.from('GIF89a...'), 'image/gif'],
    ['WebP', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8L')]), 'image/webp'],
    ['<svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml'],
    ['<SVG> after whitespace', Buffer.from('\n  <SVG>'), 'image/svg+xml'],
    ['an XML declaration then <svg', Buffer.from('<?xml version="1.0"?>\n<!DOCTYPE svg>\n<svg>'), 'image/svg+xml'],
    ['a BOM then <svg', Buffer.from('\ufeff<svg/>'), 'image/svg+xml'],
  ])('recognises %s', (_case, head, type) => {
    expect(sniffImageType(head)).toBe(type);
  });

  it.each([
    ['empty', Buffer.alloc(0)],
    ['a truncated PNG signature', PNG.subarray(0, 7)],
    ['a RIFF WAVE', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE')])],
    ['HTML', Buffer.from('<html><svg></svg></html>')],
    ['XML without svg', Buffer.from('<?xml version="1.0"?><rss/>')],
    ['an element named svgfoo', Buffer.from('<svgfoo/>')],
    ['text mentioning <svg later', Buffer.from('hello <svg>')],
    ['an <svg after the bytes read', Buffer.from(`<?xml version="1.0"?><!--${'x'.repeat(SNIFF_BYTES)}--><svg/>`)],
    ['a PDF', Buffer.from('%PDF-1.7')],
  ])('recognises nothing in %s', (_case, head) => {
    expect(sniffImageType(head)).toBeUndefined();
  });
});

describe('checkImageFile', () => {
  it('accepts each allowed extension, any case, with matching content, and gives the canonical type and key extension', () => {
    expect(checkImageFile('a.PNG', PNG)).toMatchObject({ contentType: 'image/png', keyExtension: 'png' });
    expect(checkImageFile('a.jpeg', JPEG)).toMatchObject({ contentType: 'image/jpeg', keyExtension: 'jpg' });
    expect(checkImageFile('a.b.jpg', JPEG)).toMatchObject({ contentType: 'image/jpeg', keyExtension: 'jpg' });
    expect(checkImageFile('x.svg', Buffer.from('<svg/>'))).toMatchObject({ contentType: 'image/svg+xml', keyExtension: 'svg' });
  });

  it('refuses an extension outside the list with 415, whatever the content', () => {
    for (const name of ['a.bmp', 'a', 'png', 'a.png.exe', 'a.', '.htaccess']) {
      expect(statusOf(() => checkImageFile(name, PNG)), name).toEqual({ status: 415, code: 'UNSUPPORTED_FILE_TYPE', field: 'file' });
    }
  });

  it('refuses content that is not what the extension says with 415', () => {
    expect(statusOf(() => checkImageFile('a.png', JPEG))).toEqual({ status: 415, code: 'FILE_CONTENT_MISMATCH', field: 'file' });
    expect(statusOf(() => checkImageFile('a.svg', PNG))).toEqual({ status: 415, code: 'FILE_CONTENT_MISMATCH', field: 'file' });
  });

  it('refuses more than 10 MB with 413 (the check the handler makes itself) and an empty file with 422', () => {
    const atLimit = Buffer.concat([PNG, Buffer.alloc(IMAGE_MAX_BYTES - PNG.length)]);
    expect(checkImageFile('a.png', atLimit).content.length).toBe(IMAGE_MAX_BYTES);
    const over = Buffer.concat([atLimit, Buffer.alloc(1)]);
    expect(statusOf(() => checkImageFile('a.png', over))).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE', field: 'file' });
    expect(statusOf(() => checkImageFile('a.png', Buffer.alloc(0)))).toEqual({ status: 422, code: 'VALIDATION_FAILED', field: 'file' });
  });
});

describe('filePartOf', () => {
  const event = (contentType: string | undefined, body: Buffer | undefined, isBase64Encoded = true) =>
    ({ headers: contentType ? { 'content-type': contentType } : {}, body: body && (isBase64Encoded ? body.toString('base64') : body.toString('utf8')), isBase64Encoded }) as APIGatewayProxyEventV2;
  const form = Buffer.from('--b\r\nContent-Disposition: form-data; name="file"; filename="a.svg"\r\n\r\n<svg/>\r\n--b--\r\n');

  it('decodes a base64 body (as API Gateway sends multipart) and a plain one', () => {
    expect(filePartOf(event('multipart/form-data; boundary=b', form))).toEqual({ filename: 'a.svg', content: Buffer.from('<svg/>') });
    expect(filePartOf(event('multipart/form-data; boundary=b', form, false))).toEqual({ filename: 'a.svg', content: Buffer.from('<svg/>') });
  });

  it('answers 415 for another media type, 400 for a missing boundary or a malformed body', () => {
    expect(statusOf(() => filePartOf(event('application/json', form)))?.status).toBe(415);
    expect(statusOf(() => filePartOf(event(undefined, form)))?.status).toBe(415);
    expect(statusOf(() => filePartOf(event('multipart/form-data', form)))).toMatchObject({ status: 400, code: 'INVALID_MULTIPART' });
    expect(statusOf(() => filePartOf(event('multipart/form-data; boundary=b', Buffer.from('junk'))))).toMatchObject({ status: 400, code: 'INVALID_MULTIPART' });
  });
});

describe('image keys', () => {
  const key = 'packages/7/42/abcdefghijklmnopqrstuv.png';

  it('recognises only the keys of the package', () => {
    expect(packageImageKeyType(key, 7, 42)).toBe('image/png');
    expect(packageImageKeyType('packages/7/42/abcdefghijklmnopqrstuv.jpg', 7, 42)).toBe('image/jpeg');
    expect(packageImageKeyType(key, 7, 4)).toBeUndefined();
    expect(packageImageKeyType(key, 70, 42)).toBeUndefined();
    for (const other of ['packages/7/42/abc.png', 'packages/7/42/abcdefghijklmnopqrstuv.jpeg', 'packages/7/42/../43/abcdefghijklmnopqrst.png', `/${key}`, `${key}?x`]) {
      expect(packageImageKeyType(other, 7, 42), other).toBeUndefined();
    }
  });

  it('leads from an image URL to its key only under the images base URL and the package prefix', () => {
    expect(imageKeyOfUrl(`https://images.example.com/${key}`, 7, 42)).toBe(key);
    expect(imageKeyOfUrl(`https://evil.example.com/${key}`, 7, 42)).toBeUndefined();
    expect(imageKeyOfUrl(`https://images.example.com/${key}`, 8, 42)).toBeUndefined();
  });
});
