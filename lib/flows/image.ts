import { randomBytes } from 'node:crypto';
import { config } from '#lib/config.ts';
import { deletePackage, getPackage, getStoredPackage, setPackageImage, updatePackage } from '#lib/db/package.ts';
import { provesNothingWritten } from '#lib/db/request-effects.ts';
import {
  checkImageFile,
  contentMismatch,
  imageKeyOfUrl,
  isImageContentType,
  keyExtensionOf,
  packageImageKeyType,
  packageImagePrefix,
  SNIFF_BYTES,
  sniffImageType,
  tooLarge,
  unsupportedType,
} from '#lib/domain/image-file.ts';
import { HttpError, unprocessable } from '#lib/errors.ts';
import type { UploadedFile } from '#lib/schemas/common.ts';
import { IMAGE_CONTENT_TYPES, IMAGE_MAX_BYTES } from '#lib/schemas/image.ts';
import type { Package, PackagePatch } from '#lib/schemas/package.ts';
import { deleteImageQuietly, headImage, presignImagePost, putImage, readImageStart } from '#lib/s3/images.ts';

/**
 * Package images (extensions section 6): the multipart upload through the API (files up to the
 * ~4 MB a Lambda invocation carries on AWS), and the presigned S3 POST + confirm for files up to
 * the 10 MB limit.
 *
 * | request                     | DynamoDB (after the credential)          | S3                                          |
 * |-----------------------------|------------------------------------------|---------------------------------------------|
 * | PUT .../image               | GetItem package, UpdateItem (set image)  | PutObject, DeleteObject of the replaced one |
 * | POST .../image/upload       | GetItem package                          | none (the POST is signed in the process)    |
 * | POST .../image/confirm      | UpdateItem (set image)                   | HeadObject, ranged GetObject, DeleteObject of the replaced one |
 * | PATCH package `image: null` | the other fields' update if any, UpdateItem (clear image), GetItem | DeleteObject of the removed one |
 *
 * Each upload gets a new random key under `packages/<store>/<package>/`, and the package is
 * pointed at it by one conditional UpdateItem that also answers the image it replaces; only then
 * is the replaced object deleted (a reader never gets a URL whose object is gone). If the package
 * disappeared meanwhile, the new object is deleted and the answer is 404.
 *
 * The confirm is a call the client makes after its POST to S3. On AWS an S3 ObjectCreated event
 * on `packages/` could run the same confirmPackageImage instead (the key names the store and the
 * package); the explicit call is kept because it answers the client with the outcome (413/415
 * included) and works on the local stack, whose s3rver emits no events and enforces no POST policy.
 */
export const UPLOAD_EXPIRES_SECONDS = 300;

/** Image URLs are the configured base URL (CloudFront on AWS) and the object key. */
const imageUrl = (key: string) => `${config.imagesBaseUrl}/${key}`;
const keyOfPackageImage = (url: string, storeId: number, packageId: number) => imageKeyOfUrl(url, config.imagesBaseUrl, storeId, packageId);

const newKey = (storeId: number, packageId: number, extension: string) => `${packageImagePrefix(storeId, packageId)}${randomBytes(16).toString('base64url')}.${extension}`;

async function pointPackageTo(storeId: number, packageId: number, key: string): Promise<{ url: string }> {
  const url = imageUrl(key);
  let replaced: string | null;
  try {
    replaced = await setPackageImage(storeId, packageId, url);
  } catch (error) {
    // Refused (no package: 404; a throttle): nothing points to the new object, which must not stay
    // behind. A write whose answer was lost may have landed, pointing the package to it (issue 28):
    // it stays, and the retry confirms it again.
    if (error instanceof HttpError || provesNothingWritten(error)) await deleteImageQuietly(key, 'package not updated');
    throw error;
  }
  // The same key confirmed twice replaces nothing.
  const replacedKey = replaced !== null && replaced !== url ? keyOfPackageImage(replaced, storeId, packageId) : undefined;
  if (replacedKey) await deleteImageQuietly(replacedKey, 'replaced by a new upload');
  return { url };
}

/** PUT /app/package/{id}/image: the file is judged before anything is read or stored; a missing package stores nothing. */
export async function uploadPackageImage(storeId: number, packageId: number, upload: UploadedFile): Promise<{ url: string }> {
  const file = checkImageFile(upload.filename, upload.bytes);
  await getStoredPackage(storeId, packageId);
  const key = newKey(storeId, packageId, file.keyExtension);
  await putImage(key, file.content, file.contentType);
  return pointPackageTo(storeId, packageId, key);
}

/**
 * POST /app/package/{id}/image/upload: a presigned POST for one fresh key of the package, bound
 * to one Content-Type and 1 byte..10 MB. Nothing is recorded: the key's prefix ties it to the
 * package, and confirm checks what actually landed.
 */
export async function createImageUpload(storeId: number, packageId: number, contentType: string) {
  const type = contentType.trim().toLowerCase();
  if (!isImageContentType(type)) throw unsupportedType(`content_type must be one of ${IMAGE_CONTENT_TYPES.join(', ')}`, 'content_type');
  await getStoredPackage(storeId, packageId);
  const key = newKey(storeId, packageId, keyExtensionOf(type));
  const post = await presignImagePost(key, type, IMAGE_MAX_BYTES, UPLOAD_EXPIRES_SECONDS);
  return { url: post.url, fields: post.fields, key, expires_in: UPLOAD_EXPIRES_SECONDS };
}

/**
 * POST /app/package/{id}/image/confirm: the object under `key` (one of this package's keys) must
 * exist, be 1 byte..10 MB, carry the Content-Type of its extension and start with that type's
 * magic bytes; an object that fails is deleted (413/415). S3 on AWS enforces the POST policy
 * already; these checks are what stands when it is not (an emulator, a key written otherwise).
 */
export async function confirmPackageImage(storeId: number, packageId: number, key: string): Promise<{ url: string }> {
  const type = packageImageKeyType(key, storeId, packageId);
  if (!type) throw unprocessable(`key must be a key issued by POST /v1/app/package/${packageId}/image/upload`, 'key');
  const head = await headImage(key);
  if (!head || head.size === 0) throw unprocessable('No file was uploaded under this key (or it was already replaced)', 'key');
  const refuse = async (error: Error) => {
    await deleteImageQuietly(key, 'refused at confirm');
    return error;
  };
  if (head.size > IMAGE_MAX_BYTES) throw await refuse(tooLarge('key'));
  if (head.contentType?.split(';')[0]?.trim().toLowerCase() !== type) {
    throw await refuse(unsupportedType(`The uploaded object must have Content-Type ${type}`, 'key'));
  }
  const start = await readImageStart(key, SNIFF_BYTES);
  // Gone since the HEAD (a concurrent confirm refused and deleted it): as if nothing was uploaded.
  if (!start) throw unprocessable('No file was uploaded under this key (or it was already replaced)', 'key');
  if (sniffImageType(start) !== type) throw await refuse(contentMismatch(type, 'key'));
  return pointPackageTo(storeId, packageId, key);
}

/** Deletes the object behind a package's former image URL, when it is one of that package's keys. */
async function releaseImage(url: string | null, storeId: number, packageId: number, reason: string): Promise<void> {
  const key = url === null ? undefined : keyOfPackageImage(url, storeId, packageId);
  if (key) await deleteImageQuietly(key, reason);
}

/**
 * PATCH /app/package/{id}: `image: null` removes the image, and its object with it (the image is
 * cleared by one conditional UpdateItem that answers the URL it held, so a concurrent upload's
 * object is never the one deleted); the other fields go through the package module first, so
 * that a change it refuses (a missing category: 422) leaves the image and its object in place.
 * The package is then read as it now is (the image's UpdateItem moved `updated_at` last).
 */
export async function updatePackageReleasingImage(storeId: number, packageId: number, patch: PackagePatch): Promise<Package> {
  const { image, ...fields } = patch;
  if (image !== null) return updatePackage(storeId, packageId, fields);
  if (Object.values(fields).some((value) => value !== undefined)) await updatePackage(storeId, packageId, fields);
  await releaseImage(await setPackageImage(storeId, packageId, null), storeId, packageId, 'image removed');
  return getPackage(storeId, packageId);
}

/** DELETE /app/package/{id}: the package, then the object of its image. */
export async function deletePackageAndImage(storeId: number, packageId: number): Promise<void> {
  const deleted = await deletePackage(storeId, packageId);
  await releaseImage(deleted.image, storeId, packageId, 'package deleted');
}
