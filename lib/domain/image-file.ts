import { HttpError, unprocessable, type ErrorCode } from '#lib/errors.ts';
import { IMAGE_CONTENT_TYPES, IMAGE_MAX_BYTES, type ImageContentType } from '#lib/schemas/image.ts';

/*
 * What an image is allowed to be (spec Limits: up to 10 MB; png, jpg, jpeg, svg, gif, webp), how
 * its content is recognised (magic bytes), and under which keys a package's images are stored.
 * Pure rules: the upload, the presigned POST and the confirm (lib/flows/image.ts) all judge a
 * file by them; the images' base URL is a parameter, not read from the configuration.
 */

/** Accepted file extensions and the type each one promises. */
const TYPE_OF_EXTENSION: Record<string, ImageContentType> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
};
export const IMAGE_EXTENSIONS = Object.keys(TYPE_OF_EXTENSION);

/** The extension an object key gets: one per type (a .jpeg upload is stored as .jpg). */
const KEY_EXTENSION: Record<ImageContentType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
};

const NAME_OF_TYPE: Record<ImageContentType, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
  'image/svg+xml': 'SVG',
};

/** How much of the start of a file the content check reads (the confirm reads only this much from S3). */
export const SNIFF_BYTES = 4096;

export const isImageContentType = (value: string): value is ImageContentType => (IMAGE_CONTENT_TYPES as readonly string[]).includes(value);

const startsWith = (head: Buffer, bytes: number[], offset = 0) => bytes.every((byte, i) => head[offset + i] === byte);
const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));

/**
 * An SVG is text: after an optional UTF-8 BOM and whitespace, it begins with `<svg`, or with an
 * XML declaration and then has an `<svg` element within the bytes read.
 */
function isSvg(head: Buffer): boolean {
  let text = head.subarray(0, SNIFF_BYTES).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  text = text.trimStart();
  if (/^<svg[\s>/]/i.test(text)) return true;
  return /^<\?xml[\s?]/i.test(text) && /<svg[\s>/]/i.test(text);
}

/** The image type the content's first bytes show, or undefined when it is none of the accepted ones. */
export function sniffImageType(head: Buffer): ImageContentType | undefined {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp';
  if (isSvg(head)) return 'image/svg+xml';
  return undefined;
}

const fileError = (status: number, message: string, code: ErrorCode) => new HttpError(status, { message, code, field: 'file' });

export const tooLarge = (field: string) =>
  new HttpError(413, { message: `${field === 'file' ? 'file' : 'The uploaded object'} is larger than the 10 MB limit`, code: 'PAYLOAD_TOO_LARGE', field });

export const unsupportedType = (message: string, field: string) => new HttpError(415, { message, code: 'UNSUPPORTED_FILE_TYPE', field });

/** 415 when the content is not what its extension (or declared type) says. */
export const contentMismatch = (declared: ImageContentType, field: string) =>
  new HttpError(415, { message: `${field === 'file' ? 'file' : 'The uploaded object'} content is not a ${NAME_OF_TYPE[declared]} image`, code: 'FILE_CONTENT_MISMATCH', field });

export interface ImageFile {
  contentType: ImageContentType;
  keyExtension: string;
  content: Buffer;
}

/**
 * Judges an uploaded file: extension (415), size (413), emptiness (422), then content against
 * the extension (415). The declared part Content-Type is not trusted: the extension and the
 * bytes decide, and the object is stored with the canonical type (svg: image/svg+xml).
 */
export function checkImageFile(filename: string, content: Buffer): ImageFile {
  const dot = filename.lastIndexOf('.');
  const extension = dot < 0 ? '' : filename.slice(dot + 1).toLowerCase();
  const contentType = TYPE_OF_EXTENSION[extension];
  if (!contentType) {
    throw fileError(415, `file must have one of the extensions ${IMAGE_EXTENSIONS.join(', ')}`, 'UNSUPPORTED_FILE_TYPE');
  }
  if (content.length > IMAGE_MAX_BYTES) throw tooLarge('file');
  if (content.length === 0) throw unprocessable('file is empty', 'file');
  if (sniffImageType(content.subarray(0, SNIFF_BYTES)) !== contentType) throw contentMismatch(contentType, 'file');
  return { contentType, keyExtension: KEY_EXTENSION[contentType], content };
}

/** Object keys: `packages/<store>/<package>/<22 random base64url characters>.<ext>`, a new one per upload. */
export const packageImagePrefix = (storeId: number, packageId: number) => `packages/${storeId}/${packageId}/`;

const KEY_PATTERN = /^packages\/(\d+)\/(\d+)\/[A-Za-z0-9_-]{22}\.(png|jpg|gif|webp|svg)$/;

/** The type a key of this package stands for, or undefined when the key is not one of its image keys. */
export function packageImageKeyType(key: string, storeId: number, packageId: number): ImageContentType | undefined {
  const match = KEY_PATTERN.exec(key);
  if (!match || Number(match[1]) !== storeId || Number(match[2]) !== packageId) return undefined;
  return Object.entries(KEY_EXTENSION).find(([, extension]) => extension === match[3])?.[0] as ImageContentType;
}

export const keyExtensionOf = (contentType: ImageContentType) => KEY_EXTENSION[contentType];

/**
 * The object key behind a package's image URL, only when it is one of that package's keys under
 * the current base URL: a URL from anywhere else never leads to deleting an object.
 */
export function imageKeyOfUrl(url: string, imagesBaseUrl: string, storeId: number, packageId: number): string | undefined {
  const base = `${imagesBaseUrl}/`;
  if (!url.startsWith(base)) return undefined;
  const key = url.slice(base.length);
  return packageImageKeyType(key, storeId, packageId) ? key : undefined;
}
