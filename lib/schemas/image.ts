import * as v from 'valibot';

/** Spec Limits: package image up to 10 MB; png, jpg, jpeg, svg, gif, webp. */
export const IMAGE_MAX_BYTES = 10 * 1024 * 1024;
export const IMAGE_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml'] as const;
export type ImageContentType = (typeof IMAGE_CONTENT_TYPES)[number];

/** Package image (spec): the public URL of the uploaded image. */
export const packageImageResource = v.object({ url: v.string() });

/** A content type outside the list is a 415 (spec: wrong type), judged by lib/flows/image.ts. */
export const imageUploadBody = v.strictObject({
  content_type: v.pipe(
    v.string('content_type must be a string'),
    v.maxLength(100, 'content_type must be at most 100 characters'),
    v.description(`Content-Type of the file to upload: ${IMAGE_CONTENT_TYPES.join(', ')}`),
  ),
});

/** A presigned S3 POST: send `fields` then the part `file` as multipart/form-data to `url`. */
export const imageUploadResource = v.object({
  url: v.string(),
  fields: v.record(v.string(), v.string()),
  key: v.string(),
  expires_in: v.number(),
});

export const imageConfirmBody = v.strictObject({
  key: v.pipe(v.string('key must be a string'), v.minLength(1, 'key is required'), v.maxLength(1024, 'key must be at most 1024 characters')),
});
