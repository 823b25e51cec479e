import { describe, expect, it } from 'vitest';
import { checkImageFile, imageKeyOfUrl, packageImageKeyType, sniffImageType, SNIFF_BYTES } from '#lib/domain/image-file.ts';
import { IMAGE_MAX_BYTES } from '#lib/schemas/image.ts';
import { statusOf } from '../support/http-error.ts';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xdb, 1, 2]);

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
      expect(
        statusOf(() => checkImageFile(name, PNG)),
        name,
      ).toEqual({ status: 415, code: 'UNSUPPORTED_FILE_TYPE', field: 'file' });
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
    const base = 'https://images.example.com';
    expect(imageKeyOfUrl(`https://images.example.com/${key}`, base, 7, 42)).toBe(key);
    expect(imageKeyOfUrl(`https://evil.example.com/${key}`, base, 7, 42)).toBeUndefined();
    expect(imageKeyOfUrl(`https://images.example.com/${key}`, base, 8, 42)).toBeUndefined();
  });
});
