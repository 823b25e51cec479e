import { uploadPackageImage } from '#lib/flows/image.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { imageRoutes } from '#lib/routes/image.ts';

export const handler = defineHandler(imageRoutes['package-image-put'], async ({ auth, params, body }) => uploadPackageImage(auth.storeId, params.packageId, body.file));
