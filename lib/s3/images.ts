import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { BUCKET, s3 } from '#lib/s3/client.ts';

/*
 * The image objects of the bucket. One S3 call per function.
 *
 * | operation               | S3 call                                   |
 * |-------------------------|-------------------------------------------|
 * | store an upload         | PutObject (Content-Type, Cache-Control)   |
 * | delete a replaced image | DeleteObject                              |
 * | what was uploaded       | HeadObject (size, Content-Type)           |
 * | its first bytes         | GetObject with a Range                    |
 * | presigned POST          | none: signed in the process               |
 */

/**
 * Every upload gets a new key, so an object never changes under its URL; but a replaced object is
 * deleted, and CloudFront honours this max-age: one day bounds how long a deleted image is still
 * served from its cache without an invalidation.
 */
const CACHE_CONTROL = 'public, max-age=86400';

export async function putImage(key: string, content: Buffer, contentType: string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: content, ContentType: contentType, CacheControl: CACHE_CONTROL }));
}

export async function deleteImage(key: string): Promise<void> {
  await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
}

/**
 * Deletes an object the package no longer points to. Its failure must not fail a request whose
 * change is already made: it is logged (as one JSON line) and the object stays an orphan under
 * the package's prefix.
 */
export async function deleteImageQuietly(key: string, reason: string): Promise<void> {
  try {
    await deleteImage(key);
  } catch (error) {
    console.error(
      JSON.stringify({
        level: 'warn',
        message: 'image object not deleted',
        reason,
        bucket: BUCKET,
        key,
        error: { name: (error as Error).name, message: (error as Error).message },
      }),
    );
  }
}

const isMissing = (error: unknown) => error instanceof Error && (error.name === 'NotFound' || error.name === 'NoSuchKey');

/** Size and Content-Type of an object; undefined when there is none under the key. */
export async function headImage(key: string): Promise<{ size: number; contentType: string | undefined } | undefined> {
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    return { size: head.ContentLength ?? 0, contentType: head.ContentType };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** The first `bytes` bytes of an object (fewer if it is shorter); undefined when there is none under the key. */
export async function readImageStart(key: string, bytes: number): Promise<Buffer | undefined> {
  let object;
  try {
    object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: `bytes=0-${bytes - 1}` }));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  const content = Buffer.from((await object.Body?.transformToByteArray()) ?? []);
  // A server that ignores Range sends the whole object: keep only what was asked for.
  return content.subarray(0, bytes);
}

/**
 * A browser-ready S3 POST for one key: S3 refuses (on AWS) a file outside 1..maxBytes or of
 * another Content-Type, and the form after `expiresIn` seconds.
 */
export function presignImagePost(key: string, contentType: string, maxBytes: number, expiresIn: number) {
  return createPresignedPost(s3, {
    Bucket: BUCKET,
    Key: key,
    Conditions: [
      ['content-length-range', 1, maxBytes],
      ['eq', '$Content-Type', contentType],
      ['eq', '$Cache-Control', CACHE_CONTROL],
    ],
    Fields: { 'Content-Type': contentType, 'Cache-Control': CACHE_CONTROL },
    Expires: expiresIn,
  });
}
