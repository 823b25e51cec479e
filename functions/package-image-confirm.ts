import { confirmPackageImage } from '#lib/flows/image.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { imageRoutes } from '#lib/routes/image.ts';

export const handler = defineHandler(imageRoutes['package-image-confirm'], async ({ auth, params, body }) => confirmPackageImage(auth.storeId, params.packageId, body.key));
