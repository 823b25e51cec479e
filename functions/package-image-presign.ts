import { createImageUpload } from '#lib/flows/image.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { imageRoutes } from '#lib/routes/image.ts';

export const handler = defineHandler(imageRoutes['package-image-presign'], async ({ auth, params, body }) => createImageUpload(auth.storeId, params.packageId, body.content_type));
