import { route } from '#lib/http/route.ts';
import { idParams } from '#lib/schemas/common.ts';
import { imageConfirmBody, imageUploadBody, imageUploadResource, packageImageResource } from '#lib/schemas/image.ts';

/** Package images: the multipart upload, and the presigned S3 POST with its confirm for files a Lambda cannot carry. */
export const imageRoutes = {
  'package-image-put': route({
    method: 'PUT', path: '/v1/app/package/{packageId}/image', api: 'api', credential: 'operator', access: 'write', uses: ['images'], tag: 'Package',
    summary: "Upload the package's image (multipart/form-data, part file: png, jpg, jpeg, svg, gif or webp, up to 10 MB; about 4 MB through API Gateway on AWS), replacing any existing one",
    params: idParams('packageId'), body: 'multipart', response: packageImageResource,
    example: {
      file: {
        filename: 'vip.svg',
        contentType: 'image/svg+xml',
        content: '<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160"><rect width="160" height="160" rx="24" fill="#7c3aed"/></svg>',
      },
    },
  }),
  'package-image-presign': route({
    method: 'POST', path: '/v1/app/package/{packageId}/image/upload', api: 'api', credential: 'operator', access: 'read', uses: ['images'], tag: 'Package', rerunsAfterLostAnswer: true,
    summary: 'A presigned S3 POST for an image up to 10 MB (expires in 300 s); then confirm its key',
    params: idParams('packageId'), body: imageUploadBody, response: imageUploadResource,
    example: { body: { content_type: 'image/png' } },
  }),
  'package-image-confirm': route({
    method: 'POST', path: '/v1/app/package/{packageId}/image/confirm', api: 'api', credential: 'operator', access: 'write', uses: ['images'], tag: 'Package', rerunsAfterLostAnswer: true,
    summary: 'Make the object uploaded with the presigned POST the package image (checked: size, type, magic bytes), replacing any existing one',
    params: idParams('packageId'), body: imageConfirmBody, response: packageImageResource,
    // An upload the demo seed made through package 1's presigned POST and left unconfirmed.
    example: { body: { key: '{{image_upload_key}}' } },
  }),
} as const;
